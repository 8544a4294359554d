//! The process tree from /proc (Linux): which processes descend from one
//! (to kill an app's whole family after a timeout, to sum its GPU memory)
//! and whether one is still alive.

/// True while `pid` exists and is not a zombie.
pub(crate) fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat
            .rfind(')')
            .and_then(|i| stat[i + 1..].split_whitespace().next())
            .is_some_and(|state| state != "Z" && state != "X"),
        Err(_) => false,
    }
}

/// Every process whose parent chain leads to `root`, from /proc (Linux).
pub(crate) fn descendants(root: u32) -> Vec<u32> {
    let mut parent_of: Vec<(u32, u32)> = Vec::new();
    if let Ok(entries) = std::fs::read_dir("/proc") {
        for entry in entries.flatten() {
            let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
                continue;
            };
            let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
                continue;
            };
            // `pid (comm) state ppid …`; comm may contain spaces and parentheses.
            let Some(after) = stat.rfind(')').map(|i| &stat[i + 1..]) else {
                continue;
            };
            if let Some(ppid) = after.split_whitespace().nth(1).and_then(|p| p.parse().ok()) {
                parent_of.push((pid, ppid));
            }
        }
    }
    let mut found = vec![root];
    let mut i = 0;
    while i < found.len() {
        let parent = found[i];
        found.extend(
            parent_of
                .iter()
                .filter(|(_, pp)| *pp == parent)
                .map(|(p, _)| *p),
        );
        i += 1;
    }
    found.remove(0);
    found
}

/// The processes whose name (`/proc/PID/comm`, at most 15 bytes) is one of
/// `names`, with that name, by pid.
pub(crate) fn named(names: &[&str]) -> Vec<(u32, String)> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return found;
    };
    for entry in entries.flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(comm) = std::fs::read_to_string(entry.path().join("comm")) else {
            continue;
        };
        let comm = comm.trim_end();
        if names.contains(&comm) {
            found.push((pid, comm.to_string()));
        }
    }
    found.sort();
    found
}

/// Whether `pid` has the CUDA driver (`libcuda.so`) mapped: a process that
/// may hold a GPU context. Read from /proc, so it holds inside a PID
/// namespace, where NVML's pids are the host's.
pub(crate) fn uses_cuda(pid: u32) -> bool {
    let Ok(maps) = std::fs::File::open(format!("/proc/{pid}/maps")) else {
        return false;
    };
    maps_cuda(std::io::BufReader::new(maps))
}

/// Whether a `/proc/<pid>/maps` text maps `libcuda.so`.
fn maps_cuda(maps: impl std::io::BufRead) -> bool {
    // A large app maps a few thousand regions; a line is bounded by the kernel.
    maps.split(b'\n')
        .take(1 << 16)
        .map_while(|line| line.ok())
        .any(|line| {
            line.windows(b"/libcuda.so".len())
                .any(|w| w == b"/libcuda.so")
        })
}

/// How long ago this process started, from /proc (Linux).
pub(crate) fn age() -> Option<std::time::Duration> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // `pid (comm) state …`: starttime is the 22nd field, the 20th after `)`.
    let after = &stat[stat.rfind(')')? + 1..];
    let start_ticks: f64 = after.split_whitespace().nth(19)?.parse().ok()?;
    let uptime: f64 = std::fs::read_to_string("/proc/uptime")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()?;
    // SAFETY: sysconf reads a constant of the system.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    let age = uptime - start_ticks / (hz.max(1) as f64);
    std::time::Duration::try_from_secs_f64(age.max(0.0)).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_process_is_found_by_its_name() {
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .expect("sleep");
        // Its name is the parent's until its exec is done: looked up until it is `sleep`.
        let until = std::time::Instant::now() + std::time::Duration::from_secs(5);
        let mut found = named(&["sleep", "no-such-process"]);
        while !found.iter().any(|(pid, _)| *pid == child.id()) && std::time::Instant::now() < until
        {
            std::thread::sleep(std::time::Duration::from_millis(10));
            found = named(&["sleep", "no-such-process"]);
        }
        child.kill().expect("kill");
        child.wait().expect("wait");
        assert!(
            found.contains(&(child.id(), "sleep".to_string())),
            "{found:?}"
        );
        assert!(found.iter().all(|(_, n)| n == "sleep"));
    }

    #[test]
    fn a_child_is_a_descendant_and_alive_until_reaped() {
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .expect("sleep");
        let me = std::process::id();
        assert!(descendants(me).contains(&child.id()));
        assert!(alive(child.id()));
        child.kill().expect("kill");
        child.wait().expect("wait");
        assert!(!alive(child.id()));
        assert!(!descendants(me).contains(&child.id()));
    }

    #[test]
    fn a_process_without_the_cuda_driver_does_not_use_cuda_and_we_are_young() {
        // The test binary links no libcuda; pid 0 does not exist.
        assert!(!uses_cuda(std::process::id()));
        assert!(!uses_cuda(0));
        // A stand-in in the format of /proc/<pid>/maps (none with libcuda can
        // be recorded on a machine without the driver).
        let cuda = "7f31c0000000-7f31c0a00000 r-xp 00000000 08:01 1234 /usr/lib/x86_64-linux-gnu/libcuda.so.580.65.06\n";
        let other = "7f31c0000000-7f31c0a00000 r-xp 00000000 08:01 1234 /usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1\n";
        assert!(maps_cuda(cuda.as_bytes()));
        assert!(!maps_cuda(other.as_bytes()));
        let age = age().expect("/proc/self/stat");
        assert!(age < std::time::Duration::from_secs(3600), "{age:?}");
    }
}
