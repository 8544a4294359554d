//! [`ReplayRunner`]: plays back recorded output, exit codes and files in
//! place of real processes, so the runner is tested without a GPU.

use super::process::{CommandSpec, Exit, Finished, ProcessRunner};
use std::collections::VecDeque;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Duration;

/// One recorded step for [`ReplayRunner`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recorded {
    /// The output lines, as the real command printed them.
    pub lines: Vec<String>,
    pub exit: Exit,
    /// What the command wrote to its `stdout_to` file (ncu --import's CSV).
    pub stdout_file: Option<Vec<u8>>,
    /// Files the command created: (path relative to the export directory, contents).
    pub files: Vec<(String, Vec<u8>)>,
}

impl Recorded {
    /// A step that printed `log` and ended with `exit`.
    pub fn log(log: &str, exit: Exit) -> Recorded {
        Recorded {
            lines: log.lines().map(str::to_string).collect(),
            exit,
            stdout_file: None,
            files: Vec::new(),
        }
    }
}

/// Plays back recorded steps in order and remembers the commands it was given.
#[derive(Debug, Default)]
pub struct ReplayRunner {
    steps: Mutex<VecDeque<Recorded>>,
    /// Every command run, in order.
    pub seen: Mutex<Vec<CommandSpec>>,
    /// Where `files` of a step are created.
    pub(crate) export_dir: PathBuf,
    /// GPU samples every profiled run sees (none: no probe).
    pub(crate) gpu: Option<crate::shared_gpu::probe::Replayed>,
}

impl ReplayRunner {
    pub fn new(export_dir: PathBuf, steps: Vec<Recorded>) -> ReplayRunner {
        ReplayRunner {
            steps: Mutex::new(steps.into()),
            seen: Mutex::new(Vec::new()),
            export_dir,
            gpu: None,
        }
    }

    /// The same, with `samples` as what the GPU probe sees during each run.
    pub fn with_gpu(mut self, samples: Vec<crate::shared_gpu::Sample>) -> ReplayRunner {
        self.gpu = Some(crate::shared_gpu::probe::Replayed(samples));
        self
    }

    /// Adds a step after the recorded ones.
    pub fn push(&self, step: Recorded) {
        if let Ok(mut steps) = self.steps.lock() {
            steps.push_back(step);
        }
    }
}

impl ProcessRunner for ReplayRunner {
    fn gpu_probe(&self) -> Option<&dyn crate::shared_gpu::GpuProbe> {
        self.gpu
            .as_ref()
            .map(|g| g as &dyn crate::shared_gpu::GpuProbe)
    }

    fn run(&self, spec: &CommandSpec, on_line: &mut dyn FnMut(&str)) -> Finished {
        if let Ok(mut seen) = self.seen.lock() {
            seen.push(spec.clone());
        }
        let step = self.steps.lock().ok().and_then(|mut s| s.pop_front());
        let Some(step) = step else {
            return Finished {
                exit: Exit::SpawnFailed(format!(
                    "replay: no recorded step for `{}`",
                    spec.display()
                )),
                lines: Vec::new(),
                elapsed: Duration::ZERO,
            };
        };
        // A recording that cannot be laid down is a broken test setup: say so.
        let written = step
            .files
            .iter()
            .map(|(name, bytes)| {
                let path = self.export_dir.join(name);
                std::fs::write(&path, bytes).map_err(|e| (path, e))
            })
            .chain(
                (spec.stdout_to.as_ref())
                    .zip(step.stdout_file.as_ref())
                    .map(|(path, bytes)| {
                        std::fs::File::create(path)
                            .and_then(|mut f| f.write_all(bytes))
                            .map_err(|e| (path.clone(), e))
                    }),
            )
            .collect::<Result<Vec<()>, _>>();
        if let Err((path, e)) = written {
            return Finished {
                exit: Exit::SpawnFailed(format!("replay: cannot write {}: {e}", path.display())),
                lines: Vec::new(),
                elapsed: Duration::ZERO,
            };
        }
        for line in &step.lines {
            on_line(line);
        }
        Finished {
            exit: step.exit,
            lines: step.lines,
            elapsed: Duration::from_millis(1),
        }
    }
}
