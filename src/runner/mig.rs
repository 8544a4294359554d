//! MIG: a GPU split into instances (`nvidia-smi mig`). An instance is its own
//! GPU to CUDA and to ncu, named after its parent and its profile
//! (`NVIDIA H100 80GB HBM3 MIG 1g.10gb`, with 16 of the 132 SMs), and its
//! clocks are the parent's: ncu cannot lock them for one instance, and a
//! lock would change them under every other instance's work. So on a MIG
//! instance ncu runs with `--clock-control none` whatever `clock_control`
//! says ([`clock_control`]), the run says so, and reports of a MIG GPU say
//! its clocks were not locked.
//!
//! An instance is told by the name the export gives the GPU
//! ([`profile_of`]; the baseline folder's name is made of it, so it
//! carries the profile: `nvidia-h100-80gb-hbm3-mig-1g-10gb-cc90-16sm`), and
//! before a run by `CUDA_VISIBLE_DEVICES` naming a MIG device (`MIG-<UUID>`,
//! how CUDA applications are pointed at an instance).

use super::ClockControl;

/// The MIG profile in a GPU's name (`1g.10gb` of `NVIDIA H100 80GB HBM3 MIG
/// 1g.10gb`, also `1c.2g.20gb` for a compute instance and `1g.10gb+me` with
/// the media extensions), as written; `None` for a whole GPU.
pub(crate) fn profile_of(name: &str) -> Option<&str> {
    let (_, profile) = name.rsplit_once(" MIG ")?;
    let profile = profile.trim();
    let base = profile
        .strip_suffix("+me")
        .or_else(|| profile.strip_suffix("+ME"))
        .unwrap_or(profile);
    let parts: Vec<&str> = base.split('.').collect();
    let (memory, slices) = parts.split_last()?;
    let sized = |part: &str, unit: &[char]| {
        part.len() >= 2
            && part.ends_with(unit)
            && part[..part.len() - 1].bytes().all(|b| b.is_ascii_digit())
    };
    let memory_ok = memory.len() > 2
        && memory.to_ascii_lowercase().ends_with("gb")
        && memory[..memory.len() - 2]
            .bytes()
            .all(|b| b.is_ascii_digit());
    let slices_ok = !slices.is_empty()
        && slices.len() <= 2
        && slices.iter().all(|s| sized(s, &['g', 'G', 'c', 'C']));
    (memory_ok && slices_ok).then_some(profile)
}

/// Whether `CUDA_VISIBLE_DEVICES` (the app's `[app] env`, else ncugate's
/// own environment) names a MIG instance.
pub(crate) fn selected(app_env: &[(String, String)]) -> bool {
    let visible = app_env
        .iter()
        .rev()
        .find(|(k, _)| k == "CUDA_VISIBLE_DEVICES")
        .map(|(_, v)| v.clone())
        .or_else(|| std::env::var("CUDA_VISIBLE_DEVICES").ok());
    visible.is_some_and(|v| v.split(',').any(|d| d.trim().starts_with("MIG-")))
}

/// The clock control ncu runs with: `none` on a MIG instance, else `requested`.
pub(crate) fn clock_control(requested: ClockControl, app_env: &[(String, String)]) -> ClockControl {
    if selected(app_env) {
        ClockControl::None
    } else {
        requested
    }
}

/// What a report says of a MIG GPU's clocks.
pub(crate) fn clocks_note(gpu: &str, profile: &str) -> String {
    format!(
        "{gpu} is a MIG instance ({profile}): its clocks were not locked (a MIG instance's clocks are its parent GPU's; ncugate profiles it with --clock-control none), so timings move with the other instances' load"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mig_profiles_are_read_from_device_names() {
        // Device names as CUDA (torch.cuda.get_device_name) and NVML give them,
        // quoted in public material.
        assert_eq!(
            profile_of("NVIDIA H100 80GB HBM3 MIG 1g.10gb"),
            Some("1g.10gb")
        );
        assert_eq!(
            profile_of("NVIDIA A100-SXM4-40GB MIG 1g.5gb"),
            Some("1g.5gb")
        );
        assert_eq!(
            profile_of("NVIDIA A100-PCIE-40GB MIG 3G.20GB"),
            Some("3G.20GB")
        );
        assert_eq!(
            profile_of("NVIDIA H100 80GB HBM3 MIG 1g.10gb+me"),
            Some("1g.10gb+me")
        );
        assert_eq!(
            profile_of("NVIDIA A100-SXM4-40GB MIG 1c.2g.10gb"),
            Some("1c.2g.10gb")
        );
        assert_eq!(profile_of("NVIDIA H100 80GB HBM3"), None);
        assert_eq!(profile_of("NVIDIA H200"), None);
        assert_eq!(profile_of("Some MIG welder"), None);
    }

    #[test]
    fn a_mig_instance_in_cuda_visible_devices_forces_clock_control_none() {
        let mig = [(
            "CUDA_VISIBLE_DEVICES".to_string(),
            "MIG-4e2e5ba6-3e5c-5b1c-9f3e-2c1b0e6d5a10".to_string(),
        )];
        assert_eq!(clock_control(ClockControl::Base, &mig), ClockControl::None);
        let whole = [("CUDA_VISIBLE_DEVICES".to_string(), "0".to_string())];
        assert_eq!(
            clock_control(ClockControl::Base, &whole),
            ClockControl::Base
        );
    }
}
