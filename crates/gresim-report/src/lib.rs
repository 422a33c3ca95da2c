//! gresim's outputs: per-job records (JSON, CSV), a run summary (JSON and a
//! terminal table), a GPU-utilization chart (SVG), the persisted run
//! (`run.json`, [`run_file`]) and what is built from it: the Slurm-style
//! views ([`squeue`], [`sacct`], [`sinfo`], [`explain`]), the charts
//! ([`charts`]), the HTML report ([`html`]) and monitoring series
//! ([`metrics`]). See docs/reports.md.
//!
//! Everything here is a pure function of a [`SimOutput`]: the same run gives
//! byte-identical files.

pub mod charts;
pub mod explain;
pub mod fragmentation;
pub mod html;
pub mod metrics;
pub mod mig_dynamic;
pub mod placement;
pub mod plot;
pub mod raster;
pub mod records;
pub mod run_file;
pub mod sacct;
pub mod shares;
pub mod sinfo;
pub mod slurmfmt;
pub mod squeue;
pub mod sshare;
pub mod summary;

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use gresim_engine::SimOutput;

pub use plot::utilization_svg;
pub use records::{job_records, records_csv, records_json, JobRecord};
pub use run_file::{RunFile, RunMeta};
pub use summary::{round6, Stats, Summary};

/// The files [`write_outputs`] writes.
pub const OUTPUT_FILES: [&str; 5] = [
    "records.json",
    "records.csv",
    "summary.json",
    "utilization.svg",
    run_file::RUN_FILE,
];

/// Writes records.json, records.csv, summary.json, utilization.svg and
/// run.json into `dir` atomically (see [`write_outputs_with`]); run.json
/// then holds no scenario text and no admin actions.
pub fn write_outputs(out: &SimOutput, scenario_name: &str, dir: &Path) -> io::Result<Summary> {
    write_outputs_with(out, &RunMeta::new(scenario_name), dir)
}

/// Writes records.json, records.csv, summary.json, utilization.svg and
/// run.json (the persisted run the views read, see [`run_file`]) into `dir`
/// atomically: everything is first written into a fresh temporary directory
/// `dir/.gresim-tmp-<pid>` and then each file is renamed into place, so a
/// failure leaves no half-written output.
///
/// `dir` is created if needed. Each file is replaced atomically (a rename
/// within one file system); if rendering or writing fails, no file in `dir`
/// has been touched and the temporary directory is removed.
///
/// The per-job files (records, run.json) are streamed job by job into the
/// temporary files, so memory does not grow with their size; when the
/// process may use more than one CPU, run.json is written by a second
/// thread beside the records (docs/performance.md, "Output phase").
pub fn write_outputs_with(out: &SimOutput, meta: &RunMeta, dir: &Path) -> io::Result<Summary> {
    let scenario_name = meta.scenario.as_str();
    let summary = Summary::compute(out, scenario_name);
    let title = format!("{scenario_name} ({}): GPUs over time", out.policy);
    let svg = utilization_svg(out, &title).map_err(io::Error::other)?;
    let mut stage = Staging::new(dir)?;
    let mut json = stage.create(OUTPUT_FILES[0])?;
    let mut csv = stage.create(OUTPUT_FILES[1])?;
    stage.write(OUTPUT_FILES[2], summary.to_json().as_bytes())?;
    stage.write(OUTPUT_FILES[3], svg.as_bytes())?;
    let mut run = stage.create(OUTPUT_FILES[4])?;
    let records = move || -> io::Result<()> {
        records::write_records(out, &mut json, &mut csv)?;
        Staging::close(json)?;
        Staging::close(csv)
    };
    let run_json = move || -> io::Result<()> {
        run_file::write_run_json(out, meta, &mut run)?;
        Staging::close(run)
    };
    // Each file is written by one thread from start to end, so the bytes do
    // not depend on whether the two writers run side by side.
    let parallel = std::thread::available_parallelism().is_ok_and(|n| n.get() > 1);
    let (a, b) = if parallel {
        std::thread::scope(|s| {
            let h = s.spawn(run_json);
            let a = records();
            let b = h
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            (a, b)
        })
    } else {
        (records(), run_json())
    };
    a?;
    b?;
    stage.commit()?;
    Ok(summary)
}

/// Writes `(name, contents)` files (text or bytes) into `dir` through a
/// temporary directory and renames, so a failure leaves no half-written
/// file. `dir` is created if needed.
pub fn write_files_atomic<B: AsRef<[u8]>>(dir: &Path, contents: &[(&str, B)]) -> io::Result<()> {
    let mut stage = Staging::new(dir)?;
    for (name, text) in contents {
        stage.write(name, text.as_ref())?;
    }
    stage.commit()
}

/// Files being written into a temporary directory `dir/.gresim-tmp-<pid>`,
/// to be renamed into `dir` by [`Staging::commit`]. Dropped without a
/// commit (an error on the way), it removes the temporary directory and
/// leaves `dir` untouched.
pub struct Staging {
    tmp: PathBuf,
    dir: PathBuf,
    /// (temporary path, final path), in creation order.
    staged: Vec<(PathBuf, PathBuf)>,
}

impl Staging {
    /// Creates `dir` if needed and a fresh temporary directory inside it.
    pub fn new(dir: &Path) -> io::Result<Staging> {
        fs::create_dir_all(dir)?;
        let tmp = dir.join(format!(".gresim-tmp-{}", std::process::id()));
        // A leftover from a crashed run that had the same pid.
        if tmp.exists() {
            fs::remove_dir_all(&tmp)?;
        }
        fs::create_dir(&tmp)?;
        Ok(Staging {
            tmp,
            dir: dir.to_path_buf(),
            staged: Vec::new(),
        })
    }

    /// Creates the temporary file of `name`, buffered; finish it with
    /// [`Staging::close`].
    pub fn create(&mut self, name: &str) -> io::Result<io::BufWriter<fs::File>> {
        let path = self.tmp.join(name);
        let f = fs::File::create(&path)?;
        self.staged.push((path, self.dir.join(name)));
        Ok(io::BufWriter::with_capacity(1 << 16, f))
    }

    /// Flushes a file of [`Staging::create`] and syncs it to disk.
    pub fn close(w: io::BufWriter<fs::File>) -> io::Result<()> {
        let f = w.into_inner().map_err(io::IntoInnerError::into_error)?;
        f.sync_all()
    }

    /// Writes a whole file.
    pub fn write(&mut self, name: &str, bytes: &[u8]) -> io::Result<()> {
        let path = self.tmp.join(name);
        let mut f = fs::File::create(&path)?;
        self.staged.push((path, self.dir.join(name)));
        io::Write::write_all(&mut f, bytes)?;
        f.sync_all()
    }

    /// Renames every file into place (refusing before moving anything when
    /// a target name is a directory) and removes the temporary directory.
    pub fn commit(mut self) -> io::Result<()> {
        // A rename onto a directory would fail midway: refuse before moving anything.
        for (_, to) in &self.staged {
            if to.is_dir() {
                return Err(io::Error::new(
                    io::ErrorKind::AlreadyExists,
                    format!("{} is a directory", to.display()),
                ));
            }
        }
        for (from, to) in std::mem::take(&mut self.staged) {
            fs::rename(from, to)?;
        }
        Ok(())
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        // Best effort: the directory is empty after a commit, and on failure
        // the original error matters more than a cleanup error.
        let _ = fs::remove_dir_all(&self.tmp);
    }
}

#[cfg(test)]
pub(crate) mod test_support {
    //! A tiny hand-made run shared by the tests.

    use std::sync::Arc;

    use gresim_engine::{Sample, SimOutput, Usage};
    use gresim_model::catalog::model_by_name;
    use gresim_model::job::{Job, JobRequest, JobSpec, Run, RunTime};
    use gresim_model::state::{Allocation, CoreSet, NodeAlloc};
    use gresim_model::{
        Cluster, GpuDevice, GpuType, GpuTypeId, JobId, JobState, Node, NodeAdminState, NodeId,
        PartId, Partition, Reason,
    };
    use gresim_sched::SchedParams;

    fn cluster() -> Cluster {
        let model = model_by_name("A100-SXM4-80GB").unwrap();
        let gpu = |i: u8| GpuDevice {
            ty: GpuTypeId(0),
            model,
            socket: Some(0),
            phys: i,
            mig: None,
        };
        Cluster::new(
            vec![Node {
                name: "gpu01".into(),
                sockets: 2,
                cores_per_socket: 4,
                threads_per_core: 2,
                memory_mib: 64_000,
                features: vec![],
                weight: 1,
                gpus: vec![gpu(0), gpu(1)],
                gpu_links: None,
                state: NodeAdminState::Up,
            }],
            vec![Partition {
                name: "gpu".into(),
                nodes: vec![NodeId(0)],
                default: true,
                max_time: Some(3600),
                default_time: None,
                priority_tier: 1,
                priority_job_factor: 1,
                min_nodes: 0,
                max_nodes: None,
                state: Default::default(),
                preempt_mode: None,
                grace_time: 0,
                oversubscribe: 1,
                force: false,
                exclusive: false,
            }],
            vec![GpuType {
                name: "a100".into(),
                model,
                mig: None,
            }],
        )
    }

    fn spec(key: &str, name: &str, user: &str, req: &Arc<JobRequest>, submit: u64) -> JobSpec {
        JobSpec::new(key, name, user, req.clone(), submit, RunTime::Secs(100))
    }

    fn alloc(cpus: u32, mem_mib: u64, gpus: u64) -> Allocation {
        Allocation {
            nodes: vec![NodeAlloc {
                node: NodeId(0),
                cores: CoreSet::first(cpus / 2),
                cpus,
                mem_mib,
                gpus,
                tasks: 1,
                share: None,
            }],
            exclusive: false,
            row_use: gresim_model::RowUse::NONE,
        }
    }

    fn run(start: u64, end: Option<u64>, state: JobState, a: Allocation) -> Run {
        Run {
            start,
            end,
            state,
            partition: PartId(0),
            alloc: a,
            priority: 0,
        }
    }

    fn job(sub: u32, req: &Arc<JobRequest>, submit: u64, state: JobState, runs: Vec<Run>) -> Job {
        Job {
            sub,
            task: None,
            request: req.clone(),
            job_id: Some(JobId(sub + 1)),
            array_job_id: None,
            submit,
            first_submit: submit,
            eligible: Some(submit),
            state,
            reason: Reason::None,
            reason_desc: None,
            priority: 1,
            run_time: RunTime::Secs(100),
            exit_code: 0,
            runs: runs.into(),
            held: None,
            begin: None,
            requeue: false,
            planned_end: 0,
            outcome: Default::default(),
            oom: false,
            natural_end: None,
        }
    }

    /// One node `gpu01` with 2 A100s, partition `gpu` (MaxTime 1 h):
    ///
    /// * job 1 `train` (alice): submitted 0, ran 10–110 on GPUs 0-1, COMPLETED;
    /// * job 2 `eval, "quick"` (bob, `--time=100`): submitted 5, ran 110–150 on
    ///   GPU 0 (requeued), then 200–300 on GPU 1, TIMEOUT, exit code 1;
    /// * array task 3_4 `sweep` (carol, `--time=UNLIMITED`): submitted 20, PENDING (Priority).
    pub fn sample_output() -> SimOutput {
        let plain = Arc::new(JobRequest::default());
        let limited = Arc::new(JobRequest {
            time_limit: Some(Some(100)),
            ..JobRequest::default()
        });
        let unlimited = Arc::new(JobRequest {
            time_limit: Some(None),
            ..JobRequest::default()
        });
        let specs = vec![
            spec("a", "train", "alice", &plain, 0),
            spec("b", "eval, \"quick\"", "bob", &limited, 5),
            spec("c", "sweep", "carol", &unlimited, 20),
        ];
        let j0 = job(
            0,
            &plain,
            0,
            JobState::Completed,
            vec![run(
                10,
                Some(110),
                JobState::Completed,
                alloc(4, 1000, 0b11),
            )],
        );
        let mut j1 = job(
            1,
            &limited,
            5,
            JobState::Timeout,
            vec![
                run(110, Some(150), JobState::Requeued, alloc(2, 500, 0b01)),
                run(200, Some(300), JobState::Timeout, alloc(2, 500, 0b10)),
            ],
        );
        j1.exit_code = 1;
        j1.submit = 180;
        let mut j2 = job(2, &unlimited, 20, JobState::Pending, vec![]);
        j2.job_id = None;
        j2.array_job_id = Some(JobId(3));
        j2.task = Some(4);
        j2.reason = Reason::Priority;
        j2.eligible = None;

        let s = |t, alloc_gpus: u32, alloc_cpus, running, pending| Sample {
            t,
            alloc_gpus,
            alloc_gpu_sevenths: alloc_gpus * 7,
            alloc_cpus,
            avail_gpus: 2,
            running,
            pending,
        };
        let timeline = vec![
            s(0, 0, 0, 0, 1),
            s(10, 2, 4, 1, 1),
            s(110, 1, 2, 1, 1),
            s(150, 0, 0, 0, 2),
            s(200, 1, 2, 1, 1),
            s(300, 0, 0, 0, 1),
        ];
        let usage = Usage {
            gpu_alloc_secs: vec![2 * 100 + 40 + 100],
            gpu_avail_secs: vec![2 * 300],
            gpu_sevenths_alloc_secs: 7 * 340,
            gpu_sevenths_avail_secs: 7 * 600,
            cpu_alloc_secs: 960,
            cpu_avail_secs: 16 * 300,
            from: 0,
            to: 300,
        };
        SimOutput {
            cluster: cluster(),
            params: SchedParams::default(),
            policy: "fifo".into(),
            specs,
            jobs: vec![j0, j1, j2],
            reasons: None,
            timeline,
            usage,
            end_time: 300,
            events: 42,
            hit_horizon: false,
            node_log: Vec::new(),
            node_failures: vec![0],
            pass_stats: Default::default(),
            acct: None,
            fairshare_log: Vec::new(),
            resv_history: Vec::new(),
            resv_refused: Vec::new(),
            priority_log: None,
        }
    }

    /// [`sample_output`] with another timeline and end time.
    pub fn with_timeline(timeline: Vec<Sample>, end_time: u64) -> SimOutput {
        SimOutput {
            timeline,
            end_time,
            ..sample_output()
        }
    }
}

#[cfg(test)]
mod tests;
