//! Kernel keys: which launches belong to the same kernel.
//!
//! `demangled` keeps the name exactly as ncu prints it. `function` reduces it
//! to the qualified function name: `void Sobel<float>(uchar4 *, int)` →
//! `Sobel`, `void at::native::vectorized_elementwise_kernel<4, F>(int, F)` →
//! `at::native::vectorized_elementwise_kernel`. Parentheses inside the name,
//! such as `(anonymous namespace)` or template arguments like `(int)1`, are
//! matched rather than split on.
//!
//! Keys are printable: control characters (CR, LF, …), Unicode
//! noncharacters (U+FFFE, U+FFFF, …), bidirectional controls (U+202E, …)
//! and the line and paragraph separators (U+2028, U+2029) in a name are written as `\u{…}`
//! escapes here, at the border, so no report can be broken by one — a CR/LF
//! would inject GitHub workflow commands into a CI log or split a Markdown
//! row, and U+FFFE is not allowed in XML.

use crate::model::KernelKeyMode;

/// The key of a launch of the kernel named `name`.
pub fn kernel_key(name: &str, mode: KernelKeyMode) -> String {
    let key = match mode {
        KernelKeyMode::Demangled => name.to_string(),
        KernelKeyMode::Function => function_name(name),
    };
    printable(key)
}

/// `text` with control characters and noncharacters escaped as `\u{…}`.
pub fn printable(text: String) -> String {
    if !text.chars().any(unprintable) {
        return text;
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if unprintable(c) {
            out.push_str(&format!("\\u{{{:04x}}}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    out
}

/// Every string and key of `value` made [`printable`]: JSON written for
/// machines keeps U+202E, U+2028 and U+FFFE as they are, and a viewer shows them.
pub fn printable_json(value: &mut serde_json::Value) {
    use serde_json::Value;
    match value {
        Value::String(s) => *s = printable(std::mem::take(s)),
        Value::Array(items) => items.iter_mut().for_each(printable_json),
        Value::Object(map) => {
            let entries = std::mem::take(map);
            for (key, mut v) in entries {
                printable_json(&mut v);
                map.insert(printable(key), v);
            }
        }
        Value::Null | Value::Bool(_) | Value::Number(_) => {}
    }
}

/// `text` on one line: CR, LF and tab become spaces (text from XML may wrap),
/// any other [`unprintable`] character is escaped as by [`printable`].
pub fn one_line(text: String) -> String {
    if !text.chars().any(unprintable) {
        return text;
    }
    let spaced: String = text
        .chars()
        .map(|c| {
            if matches!(c, '\n' | '\r' | '\t') {
                ' '
            } else {
                c
            }
        })
        .collect();
    printable(spaced)
}

/// A character no report may show as it is: a control character (a CR/LF
/// injects GitHub workflow commands or splits a Markdown row), a Unicode
/// noncharacter (U+FFFE is not allowed in XML), or a bidirectional control
/// (U+202A–U+202E, U+2066–U+2069, U+200E/F, U+061C: they reorder what a
/// reader sees, so a name could pass for another), or a Unicode line or
/// paragraph separator (U+2028, U+2029: a line break to a Unicode-aware
/// reader, a log viewer or a JavaScript JUnit viewer).
pub fn unprintable(c: char) -> bool {
    let u = u32::from(c);
    c.is_control()
        || (0xFDD0..=0xFDEF).contains(&u)
        || u & 0xFFFE == 0xFFFE
        || matches!(
            u,
            0x202A..=0x202E | 0x2066..=0x2069 | 0x200E | 0x200F | 0x061C | 0x2028 | 0x2029
        )
}

const UNNAMED: &str = "<unnamed>";

fn function_name(name: &str) -> String {
    let name = name.trim();
    let without_params = strip_parameter_list(name);
    // Remove template arguments (balanced `<…>`) and then the return type:
    // the name is the last space-separated word at nesting depth 0.
    let mut out = String::with_capacity(without_params.len());
    let mut angle = 0usize;
    let mut paren = 0usize;
    let mut chars = without_params.char_indices();
    while let Some((i, c)) = chars.next() {
        // `<unnamed>` is how ncu prints an anonymous namespace
        // (`void at::<unnamed>::kernel<…>(…)`): a scope, not template arguments.
        if c == '<' && angle == 0 && without_params[i..].starts_with(UNNAMED) {
            out.push_str(UNNAMED);
            for _ in 1..UNNAMED.len() {
                chars.next();
            }
            continue;
        }
        match c {
            '<' => angle += 1,
            '>' if angle > 0 => angle -= 1,
            _ if angle > 0 => {}
            '(' => {
                paren += 1;
                out.push(c);
            }
            ')' => {
                paren = paren.saturating_sub(1);
                out.push(c);
            }
            ' ' if paren == 0 => out.clear(),
            _ => out.push(c),
        }
    }
    if out.is_empty() {
        name.to_string()
    } else {
        out
    }
}

/// Drops a trailing `( … )` parameter list, matching parentheses from the end.
fn strip_parameter_list(name: &str) -> &str {
    if !name.ends_with(')') {
        return name;
    }
    let mut depth = 0usize;
    for (i, c) in name.char_indices().rev() {
        match c {
            ')' => depth += 1,
            '(' => {
                depth -= 1;
                if depth == 0 {
                    return name[..i].trim_end();
                }
            }
            _ => {}
        }
    }
    name
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(name: &str) -> String {
        kernel_key(name, KernelKeyMode::Function)
    }

    #[test]
    fn function_keys() {
        assert_eq!(f("void Sobel<float>(uchar4 *, int, int)"), "Sobel");
        assert_eq!(f("scale(float *, const float *, unsigned long)"), "scale");
        assert_eq!(
            f("void scale<(Access)1>(float *, const float *, unsigned long)"),
            "scale"
        );
        assert_eq!(
            f(
                "void at::vectorized_elementwise_kernel<4, at::AUnaryFunctor<float, float, float, at::native::binary_internal::MulFunctor<float>>, std::array<char *, 2>>(int, T2, T3)"
            ),
            "at::vectorized_elementwise_kernel"
        );
        assert_eq!(
            f(
                "void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float>(float *, const float *, int)"
            ),
            "at::native::(anonymous namespace)::cunn_SoftMaxForward"
        );
        // How ncu prints an anonymous namespace in real PyTorch exports.
        assert_eq!(
            f(
                "void at::<unnamed>::distribution_elementwise_grid_stride_kernel<float, 4, void at::native::<unnamed>::distribution_nullary_kernel<float, float, float4, at::CUDAGeneratorImpl *>(at::TensorIteratorBase &, T4, const T5 &, T6)::[lambda(int, float) (instance 1)]>(long, at::PhiloxCudaState, T3, T4)"
            ),
            "at::<unnamed>::distribution_elementwise_grid_stride_kernel"
        );
        assert_eq!(f("void <unnamed>::k<int>(int)"), "<unnamed>::k");
        assert_eq!(f("graph"), "graph");
        assert_eq!(f("_Z5scalePfPKfm"), "_Z5scalePfPKfm");
    }

    #[test]
    fn control_characters_and_noncharacters_are_escaped() {
        let key = |n: &str| kernel_key(n, KernelKeyMode::Demangled);
        assert_eq!(
            key("k\r\n::add-mask::X"),
            "k\\u{000d}\\u{000a}::add-mask::X"
        );
        assert_eq!(key("a\u{FFFE}b\u{FFFF}"), "a\\u{fffe}b\\u{ffff}");
        assert_eq!(key("tab\there"), "tab\\u{0009}here");
        assert_eq!(key("void f<é, 日本>(int)"), "void f<é, 日本>(int)");
    }

    #[test]
    fn demangled_keys_are_the_name_as_printed() {
        let name = "void Sobel<float>(uchar4 *, int)";
        assert_eq!(kernel_key(name, KernelKeyMode::Demangled), name);
    }
}
