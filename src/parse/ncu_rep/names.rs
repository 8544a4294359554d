//! A kernel's name as ncu displays it.
//!
//! A report stores three names per launch: mangled, function and demangled
//! (`void at::native::reduce_kernel<(int)512, …>`). ncu's pages show neither
//! as stored; on the reports recorded with Nsight Compute 2025.3.1 they show
//! the demangled name with two rewrites, and the mangled name where there is
//! no demangled one (a plain C symbol such as a cuBLAS `nvjet_…` kernel):
//!
//! - a cast of a template argument is dropped: `<(int)512>` is `<512>`,
//!   `std::array<char *, (unsigned long)2>` is `std::array<char *, 2>`;
//! - a namespace-qualified name keeps at most two named levels — its own name
//!   and the nearest enclosing one — after leaving out the `native`, `cuda`
//!   and `cub` namespaces (`<unnamed>` levels between the two stay):
//!   `at::native::reduce_kernel` is `at::reduce_kernel`,
//!   `at::native::templates::cuda::normal_kernel` is `templates::normal_kernel`,
//!   `at::native::<unnamed>::pow_kernel` is `at::<unnamed>::pow_kernel`.
//!
//! Older ncu versions printed such names in full (public CSVs of the 2022–2023 versions
//! show `at::native::templates::cuda::uniform_kernel`); the native reader
//! shows them as the current ncu does.
//!
//! The second rule is fitted to the names of the recorded PyTorch report
//! (`fixtures/h200/ncu-rep/`: every name of its 40 launches), not taken from
//! documentation; a name it gets wrong gives a native read another kernel key
//! than the CSV of the same report, and `--import-with-ncu` reads the report
//! through ncu instead.

/// Namespaces ncu leaves out of a displayed name.
const HIDDEN: [&str; 3] = ["native", "cuda", "cub"];
/// How an anonymous namespace is displayed.
const UNNAMED: &str = "<unnamed>";

/// The name ncu displays for a kernel with these stored names.
pub(crate) fn display(mangled: &str, function: &str, demangled: &str) -> String {
    if demangled.is_empty() {
        return if mangled.is_empty() {
            function.to_string()
        } else {
            mangled.to_string()
        };
    }
    shown(demangled)
}

/// A demangled name as ncu shows it (both rewrites above). ncu's own pages
/// (source, SASS) already show names this way, and showing one again
/// changes nothing.
pub(crate) fn shown(demangled: &str) -> String {
    shorten_namespaces(&drop_casts(demangled))
}

/// `(Type)` before a number in a template argument list is dropped.
fn drop_casts(demangled: &str) -> String {
    drop_casts_counted(demangled, &mut 0)
}

/// [`drop_casts`], adding the characters it examined to `steps`.
fn drop_casts_counted(demangled: &str, steps: &mut usize) -> String {
    let mut out = String::with_capacity(demangled.len());
    let mut rest = demangled;
    while let Some(open) = rest.find('(') {
        let after = &rest[open + 1..];
        // The type is the run of type characters after `(`; a cast closes
        // right there. Looking no further than that run keeps a name full of
        // unclosed `(` linear.
        let ty_len = after
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == ':' || c == ' '))
            .unwrap_or(after.len());
        *steps += ty_len + 1;
        let cast = Some(ty_len)
            .filter(|&close| after[close..].starts_with(')'))
            .filter(|&close| {
                let ty = &after[..close];
                let next = after[close + 1..].chars().next();
                let before = rest[..open].chars().next_back();
                // A cast follows `<`, `,` or a space, never a name (a call).
                !ty.trim().is_empty()
                    && before.is_none_or(|c| c == '<' || c == ',' || c == ' ')
                    && next.is_some_and(|c| c.is_ascii_digit() || c == '-')
            });
        match cast {
            Some(close) => {
                out.push_str(&rest[..open]);
                rest = &after[close + 1..];
            }
            None => {
                out.push_str(&rest[..=open]);
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Rewrites every qualified name `a::b::c` that starts a path (not one that
/// continues a local scope such as `f(…)::[lambda …]::operator ()`).
fn shorten_namespaces(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut i = 0;
    while i < name.len() {
        let rest = &name[i..];
        let starts_path = (rest.starts_with(UNNAMED)
            || rest
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_'))
            && !out.ends_with("::")
            && !out.chars().next_back().is_some_and(is_ident);
        if !starts_path {
            let c = rest.chars().next().unwrap_or_default();
            out.push(c);
            i += c.len_utf8().max(1);
            continue;
        }
        let (parts, len) = path(rest);
        out.push_str(&keep_two(&parts));
        i += len;
    }
    out
}

/// The components of the path at the start of `text`, and its length.
fn path(text: &str) -> (Vec<&str>, usize) {
    let mut parts = Vec::new();
    let mut at = 0;
    loop {
        let rest = &text[at..];
        let len = if rest.starts_with(UNNAMED) {
            UNNAMED.len()
        } else {
            rest.find(|c: char| !is_ident(c)).unwrap_or(rest.len())
        };
        if len == 0 {
            break;
        }
        parts.push(&rest[..len]);
        at += len;
        let next = &text[at..];
        let continues = next.strip_prefix("::").is_some_and(|n| {
            n.starts_with(UNNAMED)
                || n.chars()
                    .next()
                    .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        });
        if !continues {
            break;
        }
        at += 2;
    }
    (parts, at)
}

/// The last component and its nearest named enclosing namespace.
fn keep_two(parts: &[&str]) -> String {
    let Some((last, scopes)) = parts.split_last() else {
        return String::new();
    };
    if scopes.is_empty() {
        return (*last).to_string();
    }
    let mut kept = vec![*last];
    for scope in scopes.iter().rev().filter(|s| !HIDDEN.contains(s)) {
        kept.push(scope);
        if *scope != UNNAMED {
            break;
        }
    }
    kept.reverse();
    kept.join("::")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shown(demangled: &str) -> String {
        display("_Z1kv", "k", demangled)
    }

    #[test]
    fn enum_and_integer_casts_in_template_arguments_are_dropped() {
        assert_eq!(
            shown("void scale<(ScaleImpl)0>(const float *, float *, long, int)"),
            "void scale<0>(const float *, float *, long, int)"
        );
        assert_eq!(
            shown("void k<(ns::E)-1, (F)2>(float *)"),
            "void k<-1, 2>(float *)"
        );
        assert_eq!(
            shown("void k<std::array<char *, (unsigned long)2>>(int)"),
            "void k<std::array<char *, 2>>(int)"
        );
        assert_eq!(shown("produce(float *, long)"), "produce(float *, long)");
    }

    #[test]
    fn namespaces_as_ncu_shows_them() {
        // Names of the recorded PyTorch report, as ncu 2025.3.1 printed them.
        assert_eq!(
            shown(
                "void at::native::reduce_kernel<(int)512, (int)1, at::native::ReduceOp<float, at::native::MeanOps<float, float, float, float>, unsigned int, float, (int)4, (int)4>>(T3)"
            ),
            "void at::reduce_kernel<512, 1, at::ReduceOp<float, at::MeanOps<float, float, float, float>, unsigned int, float, 4, 4>>(T3)"
        );
        assert_eq!(
            shown(
                "void at::native::vectorized_elementwise_kernel<(int)8, at::native::AUnaryFunctor<c10::BFloat16, c10::BFloat16, c10::BFloat16, at::native::binary_internal::MulFunctor<float>>, std::array<char *, (unsigned long)2>>(int, T2, T3)"
            ),
            "void at::vectorized_elementwise_kernel<8, at::AUnaryFunctor<c10::BFloat16, c10::BFloat16, c10::BFloat16, binary_internal::MulFunctor<float>>, std::array<char *, 2>>(int, T2, T3)"
        );
        assert_eq!(
            shown(
                "void at::native::<unnamed>::k<void at::native::templates::cuda::normal_kernel<at::CUDAGeneratorImpl *>(const at::TensorBase &)::[lambda() (instance 1)]::operator ()() const>(int)"
            ),
            "void at::<unnamed>::k<void templates::normal_kernel<at::CUDAGeneratorImpl *>(const at::TensorBase &)::[lambda() (instance 1)]::operator ()() const>(int)"
        );
    }

    #[test]
    fn a_shown_name_shows_as_itself() {
        for name in [
            "void at::reduce_kernel<512, 1, at::ReduceOp<float, at::MeanOps<float>>>(T3)",
            "void at::<unnamed>::k<void templates::normal_kernel<int>(int)::[lambda() (instance 1)]>(int)",
            "void scale<0>(const float *, float *, long, int)",
        ] {
            assert_eq!(shown(name), name);
        }
    }

    #[test]
    fn a_plain_symbol_shows_its_mangled_name() {
        let nvjet = "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT";
        assert_eq!(display(nvjet, nvjet, ""), nvjet);
    }

    #[test]
    fn dropping_casts_is_linear_in_the_name() {
        // Each `(` looked ahead to the next `)`: a name of unclosed `(` was
        // quadratic (a 1 MB name would take hours).
        let n = 100_000;
        let names = [
            format!("{})", "(".repeat(n)),
            format!("{})1", "(a".repeat(n)),
            format!("void k<{}>()", "(T)1,".repeat(n)),
        ];
        for name in &names {
            let mut steps = 0;
            let out = drop_casts_counted(name, &mut steps);
            assert!(
                steps <= 2 * name.len(),
                "{steps} steps for {} bytes",
                name.len()
            );
            assert_eq!(out, drop_casts(name));
        }
        // The casts are still dropped, the unclosed parentheses kept.
        assert_eq!(drop_casts(&names[0]), names[0]);
        assert_eq!(drop_casts("void k<(T)1,(T)2>()"), "void k<1,2>()");
    }
}
