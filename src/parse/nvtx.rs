//! NVTX columns (`ncu --nvtx`) and the key of a range-replay result.
//!
//! With `--nvtx`, both pages carry two columns before `Kernel Name`: the
//! push/pop stack of the launching thread (`686  "<default domain>:train:…"
//! "<default domain>:step:…"`: the thread ID, then one quoted
//! `Domain:Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg` per level) and
//! the open start/end ranges (`"0:<default domain>:epoch:…"`, each with its
//! range ID first). A kernel keeps its own name. A result of
//! `--replay-mode range` or `app-range` is a whole range, and ncu names every
//! such result `range`: its key is made from its NVTX ranges instead, in the
//! spelling of `--nvtx-include` (`range [train/step/] [epoch]`), so two
//! ranges are two rows of the gate rather than one. Thread and range IDs are
//! left out: they change from run to run.

use crate::kernel_key::kernel_key;
use crate::model::KernelKeyMode;
use crate::text::escape::printable;

/// The push/pop column.
pub(crate) const PUSH_POP: &str =
    "thread Domain:Push/Pop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg";
/// The start/end column.
pub(crate) const START_END: &str =
    "Id:Domain:Start/Stop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg";
/// What ncu calls every result of a range replay.
const RANGE_RESULT: &str = "range";
/// The domain of ranges pushed without one.
const DEFAULT_DOMAIN: &str = "<default domain>";

/// The kernel key of one result: the kernel name (per `mode`), or for a
/// range-replay result its NVTX ranges.
pub(crate) fn result_key(
    kernel: &str,
    push_pop: &str,
    start_end: &str,
    mode: KernelKeyMode,
) -> String {
    if kernel == RANGE_RESULT {
        let stack = ranges(push_pop, false);
        let open = ranges(start_end, true);
        if !stack.is_empty() || !open.is_empty() {
            let mut key = String::from(RANGE_RESULT);
            if !stack.is_empty() {
                key.push_str(&format!(" [{}/]", stack.join("/")));
            }
            for range in open {
                key.push_str(&format!(" [{range}]"));
            }
            return printable(key);
        }
    }
    kernel_key(kernel, mode)
}

/// The ranges of one NVTX cell, outermost first, as `--nvtx-include` spells
/// them (`name`, or `domain@name` outside the default domain).
fn ranges(cell: &str, with_id: bool) -> Vec<String> {
    quoted(cell)
        .into_iter()
        .filter_map(|item| {
            let item = if with_id {
                item.split_once(':')?.1
            } else {
                item
            };
            let (domain, rest) = item.split_once(':')?;
            // The range name may hold `:` itself (`aten::mm`); the six
            // payload, color and message fields after it do not.
            let name = rest.rsplitn(7, ':').nth(6)?;
            Some(if domain == DEFAULT_DOMAIN {
                name.to_string()
            } else {
                format!("{domain}@{name}")
            })
        })
        .collect()
}

/// The `"…"` items of a cell (ncu doubles no quotes inside them).
fn quoted(cell: &str) -> Vec<&str> {
    cell.split('"').skip(1).step_by(2).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    // Cells as ncu 2025.3.1 wrote them (fixtures/h200/nvtx/).
    const STACK: &str = "686  \"<default domain>:train:none:none:none:none:none:none\"  \"<default domain>:step:none:none:none:none:none:none\" ";
    const OPEN: &str = " \"0:<default domain>:epoch:none:none:none:none:none:none\" ";

    #[test]
    fn a_range_result_is_keyed_by_its_ranges() {
        let mode = KernelKeyMode::Demangled;
        assert_eq!(
            result_key("range", STACK, OPEN, mode),
            "range [train/step/] [epoch]"
        );
        assert_eq!(result_key("range", "", OPEN, mode), "range [epoch]");
        // Thread and range IDs differ from run to run; the key does not.
        let other = STACK.replace("686", "9001");
        let reopened = OPEN.replace("\"0:", "\"17:");
        assert_eq!(
            result_key("range", &other, &reopened, mode),
            result_key("range", STACK, OPEN, mode)
        );
        // A range result without NVTX (cu(da)ProfilerStart/Stop) stays `range`.
        assert_eq!(result_key("range", "", "", mode), "range");
    }

    #[test]
    fn kernels_keep_their_names_and_names_may_hold_colons() {
        let mode = KernelKeyMode::Function;
        assert_eq!(
            result_key("void k<int>(int *)", STACK, OPEN, mode),
            kernel_key("void k<int>(int *)", mode)
        );
        let torch = "1  \"<default domain>:aten::addmm, seq = 7:none:none:none:none:none:none\"  \"mine:fwd:none:none:none:none:none:none\" ";
        assert_eq!(
            result_key("range", torch, "", mode),
            "range [aten::addmm, seq = 7/mine@fwd/]"
        );
    }
}
