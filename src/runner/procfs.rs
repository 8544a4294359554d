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
}
