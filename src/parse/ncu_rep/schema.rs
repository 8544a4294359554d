//! The subset of the `.ncu-rep` messages ncugate reads, as `prost` structs.
//!
//! Nsight Compute describes its report format in Protocol Buffers version 2
//! definitions that ship with it (`extras/FileFormat/`; see the Nsight Compute
//! Customization Guide, "Report File Format"). Only the messages and fields
//! below are declared: field numbers and wire types are facts of the format,
//! and `prost` skips every field not declared here. Every field is optional on
//! purpose — a `required` field the writer left out is reported by the reader
//! that needs it, not by the decoder.
//!
//! | message (ncu's name) | fields read (number: meaning) |
//! |---|---|
//! | `FileHeader` | 1: format version |
//! | `BlockHeader` | 1: sources, 2: kernel results, 3: session details, 4: string table, 5: payload size, 6: process, 7: range results, 8: command-list results, 9: graph results |
//! | `ReportSessionDetails` | 1: process ID, 6: device attributes (3: each attribute's 1: name, 2: value; only checked to be there), 8: session attributes |
//! | (a session attribute) | 1: name (`Nsight Compute Target`, `CUDA Version`, `Display Driver Version`, `PerfWorks`), 2: value (`2022.2.0.0 (build 31140043) (public-release)`); field numbers read from the committed reports' bytes |
//! | `ProfilerStringTable` | 1: strings (a metric's name is its index here) |
//! | `ProcessInfo` | 1: process ID, 2: host name, 3: process name |
//! | `ProfileResult` (one kernel launch) | 1: thread ID, 5: mangled name, 6: function name, 7: demangled name, 10: grid, 11: block, 13: metric results, 17: sections, 19: rule results, 15: module, 21: NVTX state, 22: context, 23: stream |
//! | `SourceData` (one loaded module's code) | 1: reference (a result's field 15 names it), 4: binary (the module's ELF cubin) |
//! | `RangeResult` (one replayed range) | 1: thread ID, 4: metric results, 10: NVTX state, 11: context, 20: rule results |
//! | `CmdlistResult` (one replayed command list) | 1: thread ID, 4: metric results, 10: NVTX state, 11: context, 12: stream, 18: display name, 21: rule results |
//! | `GraphResult` (one CUDA graph launch) | 1: thread ID, 4: metric results, 10: NVTX state, 11: context, 12: stream, 22: rule results |
//! | `ProfilerSection` | 1: identifier, 3: display order |
//! | `RuleResult` | 1: rule identifier, 3: body, 4: section identifier |
//! | `RuleResultBody` | 1: items |
//! | `RuleResultBodyItem` | 1: message, 10: estimated speedup |
//! | `RuleResultMessage` | 1: text, 2: type (0 none, 1 ok, 2 warning, 3 error, 4 optimization) |
//! | `RuleResultSpeedup` | 1: type (1 local, 2 global), 2: value (%) |
//! | `NvtxState` | 1: domains, 2: threads, 3: start/end domains |
//! | `NvtxDomainInfo` | 1: ID, 2: name |
//! | `NvtxThread` | 1: thread ID, 2: push/pop domains |
//! | `NvtxPushPopDomain` | 1: domain ID, 3: the stack of ranges |
//! | `NvtxPushPopRange` | 1: name, 2: attributes |
//! | `NvtxStartEndDomain` | 1: domain ID, 3: open ranges |
//! | `NvtxStartEndRange` | 1: ID, 2: name, 3: attributes |
//! | `Uint64x3` | 1, 2, 3: x, y, z |
//! | `ProfileMetricResult` | 1: name (string-table index), 2: value, 3: instance values |
//! | `ProfileMetricListElement` | 1: correlation ID, 2: value |
//! | `ProfileMetricValue` | 1: string, 2: float, 3: double, 4: uint32, 5: uint64 |

/// `FileHeader`: what follows the magic and its 4-byte size.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct FileHeader {
    #[prost(uint32, optional, tag = "1")]
    pub(crate) version: Option<u32>,
}

/// `BlockHeader`: how many messages of each kind the block's payload holds.
#[derive(Clone, PartialEq, prost::Message)]
pub struct BlockHeader {
    #[prost(uint32, optional, tag = "1")]
    pub(crate) num_sources: Option<u32>,
    #[prost(uint32, optional, tag = "2")]
    pub(crate) num_results: Option<u32>,
    #[prost(message, optional, tag = "3")]
    pub(crate) session_details: Option<SessionDetails>,
    #[prost(message, optional, tag = "4")]
    pub(crate) string_table: Option<StringTable>,
    #[prost(uint32, optional, tag = "5")]
    pub payload_size: Option<u32>,
    #[prost(message, optional, tag = "6")]
    pub(crate) process: Option<ProcessInfo>,
    #[prost(uint32, optional, tag = "7")]
    pub(crate) num_range_results: Option<u32>,
    #[prost(uint32, optional, tag = "8")]
    pub(crate) num_cmdlist_results: Option<u32>,
    #[prost(uint32, optional, tag = "9")]
    pub(crate) num_graph_results: Option<u32>,
}

/// `ReportSessionDetails`: the profiled process's ID and the profiler.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct SessionDetails {
    #[prost(uint32, optional, tag = "1")]
    pub(crate) process_id: Option<u32>,
    #[prost(message, repeated, tag = "8")]
    pub(crate) attributes: Vec<SessionAttribute>,
    /// The devices' attributes: read only to refuse a report where one
    /// lacks its name or value (both `required`), as NVIDIA's reader does.
    #[prost(message, repeated, tag = "6")]
    pub(crate) devices: Vec<DeviceAttributes>,
}

/// One device's attributes (`device__attribute_architecture`, …), field
/// numbers read from the committed reports' bytes: 3, the attributes.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct DeviceAttributes {
    #[prost(message, repeated, tag = "3")]
    pub(crate) attributes: Vec<DeviceAttribute>,
}

/// A device attribute: 1, its name; 2, its value.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct DeviceAttribute {
    #[prost(string, optional, tag = "1")]
    pub(crate) name: Option<String>,
    #[prost(message, optional, tag = "2")]
    pub(crate) value: Option<MetricValue>,
}

/// A name and value of the session: the versions of Nsight Compute
/// (`Nsight Compute Target`), CUDA, the driver and PerfWorks.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct SessionAttribute {
    #[prost(string, optional, tag = "1")]
    pub(crate) name: Option<String>,
    #[prost(string, optional, tag = "2")]
    pub(crate) version: Option<String>,
}

/// `ProfilerStringTable`: strings that later blocks refer to by index.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct StringTable {
    #[prost(string, repeated, tag = "1")]
    pub(crate) strings: Vec<String>,
}

/// `ProcessInfo`: the process a block's results belong to.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct ProcessInfo {
    #[prost(uint32, optional, tag = "1")]
    pub(crate) process_id: Option<u32>,
    #[prost(string, optional, tag = "2")]
    pub(crate) hostname: Option<String>,
    #[prost(string, optional, tag = "3")]
    pub(crate) process_name: Option<String>,
}

/// `ProfileResult`: one profiled kernel launch.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct ProfileResult {
    #[prost(uint32, optional, tag = "1")]
    pub(crate) thread_id: Option<u32>,
    #[prost(string, optional, tag = "5")]
    pub(crate) mangled_name: Option<String>,
    #[prost(string, optional, tag = "6")]
    pub(crate) function_name: Option<String>,
    #[prost(string, optional, tag = "7")]
    pub(crate) demangled_name: Option<String>,
    #[prost(message, optional, tag = "10")]
    pub(crate) grid_size: Option<Uint64x3>,
    #[prost(message, optional, tag = "11")]
    pub(crate) block_size: Option<Uint64x3>,
    #[prost(message, repeated, tag = "13")]
    pub(crate) metric_results: Vec<MetricResult>,
    #[prost(message, repeated, tag = "17")]
    pub(crate) sections: Vec<Section>,
    #[prost(message, repeated, tag = "19")]
    pub(crate) rule_results: Vec<RuleResult>,
    #[prost(message, optional, tag = "21")]
    pub(crate) nvtx: Option<NvtxState>,
    #[prost(uint32, optional, tag = "22")]
    pub(crate) context_id: Option<u32>,
    #[prost(uint32, optional, tag = "23")]
    pub(crate) stream_id: Option<u32>,
    /// The module the kernel's code is in (a `SourceData` with only its
    /// reference; see [`SourceData`]).
    #[prost(message, optional, tag = "15")]
    pub(crate) source: Option<SourceData>,
}

/// `ProfilerSection`: a section of a `--set`/`--section` run; only its
/// identifier and its display order (lower first) are read.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct Section {
    #[prost(string, optional, tag = "1")]
    pub(crate) identifier: Option<String>,
    #[prost(uint32, optional, tag = "3")]
    pub(crate) order: Option<u32>,
}

/// `SourceData`: the code of one loaded module. A block's source messages
/// carry the module's ELF cubin; each result names its module by `reference`
/// (its own field 15 is a `SourceData` with only the reference).
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct SourceData {
    #[prost(uint64, optional, tag = "1")]
    pub(crate) reference: Option<u64>,
    #[prost(bytes = "vec", optional, tag = "4")]
    pub(crate) binary: Option<Vec<u8>>,
}

/// `GraphResult`: one CUDA graph profiled as a whole (`--graph-profiling
/// graph`).
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct GraphResult {
    #[prost(uint32, optional, tag = "1")]
    pub(crate) thread_id: Option<u32>,
    #[prost(message, repeated, tag = "4")]
    pub(crate) metric_results: Vec<MetricResult>,
    #[prost(message, optional, tag = "10")]
    pub(crate) nvtx: Option<NvtxState>,
    #[prost(uint32, optional, tag = "11")]
    pub(crate) context_id: Option<u32>,
    #[prost(uint32, optional, tag = "12")]
    pub(crate) stream_id: Option<u32>,
    #[prost(message, repeated, tag = "22")]
    pub(crate) rule_results: Vec<RuleResult>,
}

/// `CmdlistResult`: one command list of `--replay-mode app-range`.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct CmdlistResult {
    #[prost(uint32, optional, tag = "1")]
    pub(crate) thread_id: Option<u32>,
    #[prost(message, repeated, tag = "4")]
    pub(crate) metric_results: Vec<MetricResult>,
    #[prost(message, optional, tag = "10")]
    pub(crate) nvtx: Option<NvtxState>,
    #[prost(uint32, optional, tag = "11")]
    pub(crate) context_id: Option<u32>,
    #[prost(uint32, optional, tag = "12")]
    pub(crate) stream_id: Option<u32>,
    #[prost(string, optional, tag = "18")]
    pub(crate) display_name: Option<String>,
    #[prost(message, repeated, tag = "21")]
    pub(crate) rule_results: Vec<RuleResult>,
}

/// `RuleResult`: what one rule found for one result.
#[derive(Clone, PartialEq, prost::Message)]
pub struct RuleResult {
    #[prost(string, optional, tag = "1")]
    pub(crate) identifier: Option<String>,
    #[prost(message, optional, tag = "3")]
    pub(crate) body: Option<RuleBody>,
    #[prost(string, optional, tag = "4")]
    pub(crate) section: Option<String>,
}

/// `RuleResultBody`: the rule's items, in order.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct RuleBody {
    #[prost(message, repeated, tag = "1")]
    pub(crate) items: Vec<RuleBodyItem>,
}

/// `RuleResultBodyItem`: a message, with its estimated speedup where the
/// rule gives one (tables and charts are not read).
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct RuleBodyItem {
    #[prost(message, optional, tag = "1")]
    pub(crate) message: Option<RuleMessage>,
    #[prost(message, optional, tag = "10")]
    pub(crate) speedup: Option<RuleSpeedup>,
}

/// `RuleResultMessage`: the text and its type.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct RuleMessage {
    #[prost(string, optional, tag = "1")]
    pub(crate) text: Option<String>,
    #[prost(int32, optional, tag = "2")]
    pub(crate) kind: Option<i32>,
}

/// `RuleResultSpeedup`: the estimated speedup, in percent.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct RuleSpeedup {
    #[prost(int32, optional, tag = "1")]
    pub(crate) kind: Option<i32>,
    #[prost(double, optional, tag = "2")]
    pub(crate) value: Option<f64>,
}

/// `RangeResult`: one range of `--replay-mode range` or `app-range`.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct RangeResult {
    #[prost(uint32, optional, tag = "1")]
    pub(crate) thread_id: Option<u32>,
    #[prost(message, repeated, tag = "4")]
    pub(crate) metric_results: Vec<MetricResult>,
    #[prost(message, optional, tag = "10")]
    pub(crate) nvtx: Option<NvtxState>,
    #[prost(uint32, optional, tag = "11")]
    pub(crate) context_id: Option<u32>,
    #[prost(message, repeated, tag = "20")]
    pub(crate) rule_results: Vec<RuleResult>,
}

/// `NvtxState`: the NVTX ranges open when a result was profiled (`--nvtx`).
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct NvtxState {
    #[prost(message, repeated, tag = "1")]
    pub(crate) domains: Vec<NvtxDomain>,
    #[prost(message, repeated, tag = "2")]
    pub(crate) threads: Vec<NvtxThread>,
    #[prost(message, repeated, tag = "3")]
    pub(crate) start_end_domains: Vec<NvtxStartEndDomain>,
}

/// `NvtxDomainInfo`: a domain's ID and name.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct NvtxDomain {
    #[prost(uint64, optional, tag = "1")]
    pub(crate) id: Option<u64>,
    #[prost(string, optional, tag = "2")]
    pub(crate) name: Option<String>,
}

/// `NvtxThread`: one thread's push/pop stacks, one per domain.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct NvtxThread {
    #[prost(uint32, optional, tag = "1")]
    pub(crate) tid: Option<u32>,
    #[prost(message, repeated, tag = "2")]
    pub(crate) push_pop_domains: Vec<NvtxPushPopDomain>,
}

/// `NvtxPushPopDomain`: the pushed ranges of one domain, outermost first.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct NvtxPushPopDomain {
    #[prost(uint64, optional, tag = "1")]
    pub(crate) id: Option<u64>,
    #[prost(message, repeated, tag = "3")]
    pub(crate) stack: Vec<NvtxPushPopRange>,
}

/// `NvtxPushPopRange`: one pushed range.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct NvtxPushPopRange {
    #[prost(string, optional, tag = "1")]
    pub(crate) name: Option<String>,
    #[prost(bytes = "vec", optional, tag = "2")]
    pub(crate) attributes: Option<Vec<u8>>,
}

/// `NvtxStartEndDomain`: the open start/end ranges of one domain.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct NvtxStartEndDomain {
    #[prost(uint64, optional, tag = "1")]
    pub(crate) id: Option<u64>,
    #[prost(message, repeated, tag = "3")]
    pub(crate) ranges: Vec<NvtxStartEndRange>,
}

/// `NvtxStartEndRange`: one open start/end range.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct NvtxStartEndRange {
    #[prost(uint64, optional, tag = "1")]
    pub(crate) id: Option<u64>,
    #[prost(string, optional, tag = "2")]
    pub(crate) name: Option<String>,
    #[prost(bytes = "vec", optional, tag = "3")]
    pub(crate) attributes: Option<Vec<u8>>,
}

/// `Uint64x3`: grid or block dimensions.
#[derive(Clone, Copy, PartialEq, prost::Message)]
pub(crate) struct Uint64x3 {
    #[prost(uint64, optional, tag = "1")]
    pub(crate) x: Option<u64>,
    #[prost(uint64, optional, tag = "2")]
    pub(crate) y: Option<u64>,
    #[prost(uint64, optional, tag = "3")]
    pub(crate) z: Option<u64>,
}

/// `ProfileMetricResult`: one metric of one result.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct MetricResult {
    #[prost(uint32, optional, tag = "1")]
    pub(crate) name_id: Option<u32>,
    #[prost(message, optional, tag = "2")]
    pub(crate) value: Option<MetricValue>,
    #[prost(message, repeated, tag = "3")]
    pub(crate) instances: Vec<ListElement>,
}

/// `ProfileMetricListElement`: one instance of an instanced metric. Its
/// correlation ID is decoded though nothing reads it: a damaged one makes
/// the report unreadable, as it does for NVIDIA's own reader.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct ListElement {
    #[prost(message, optional, tag = "1")]
    pub(crate) correlation_id: Option<MetricValue>,
    #[prost(message, optional, tag = "2")]
    pub(crate) value: Option<MetricValue>,
}

/// `ProfileMetricValue`: one of five variants (the writer sets one).
#[derive(Clone, PartialEq, prost::Message)]
pub struct MetricValue {
    #[prost(string, optional, tag = "1")]
    pub string: Option<String>,
    #[prost(float, optional, tag = "2")]
    pub float: Option<f32>,
    #[prost(double, optional, tag = "3")]
    pub double: Option<f64>,
    #[prost(uint32, optional, tag = "4")]
    pub uint32: Option<u32>,
    #[prost(uint64, optional, tag = "5")]
    pub uint64: Option<u64>,
}
