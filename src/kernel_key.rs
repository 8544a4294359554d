//! Kernel keys: which launches belong to the same kernel.
//!
//! `demangled` keeps the name exactly as ncu prints it. `function` reduces it
//! to the qualified function name: `void Sobel<float>(uchar4 *, int)` →
//! `Sobel`, `void at::native::vectorized_elementwise_kernel<4, F>(int, F)` →
//! `at::native::vectorized_elementwise_kernel`. Parentheses inside the name,
//! such as `(anonymous namespace)` or template arguments like `(int)1`, are
//! matched rather than split on.
//!
//! Keys are printable: the characters no report may show as they are
//! ([`crate::text::escape::unprintable`]) are written as `\u{…}` escapes
//! here, at the border, so no report can be broken by a kernel's name.

use crate::model::KernelKeyMode;
use crate::text::escape::printable;

/// The key of a launch of the kernel named `name`.
pub(crate) fn kernel_key(name: &str, mode: KernelKeyMode) -> String {
    let key = match mode {
        KernelKeyMode::Demangled => name.to_string(),
        KernelKeyMode::Function => function_name(name),
    };
    printable(key)
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
