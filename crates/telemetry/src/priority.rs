//! The exporter's threads run below the priority of the process that starts it. Ending
//! spans, encoding and sending them, and aggregating metrics are work a run should never
//! wait for; on a busy machine (two cores shared by the engine, its servers and the
//! exporter) the scheduler then gives the run's threads the cores first and the
//! exporter what is left. A collector that cannot keep up loses spans to the bounded
//! queue (counted and reported), never the run its time.
//!
//! Linux keeps a nice value per thread and a thread inherits its creator's: the
//! exporter is built on a short-lived thread that first lowers its own priority, so
//! every thread the SDK, reqwest, tonic and `defer.rs` start from it runs lower too. On
//! other systems `setpriority` would lower the whole process, so there the threads keep
//! the process's priority.

/// How far below the caller's nice value the exporter's threads run. At +10 a thread
/// gets about a tenth of a core that a thread at the caller's value also wants (CFS
/// weights 110 and 1024), and all of an idle one.
#[cfg(target_os = "linux")]
const NICER_BY: i32 = 10;

/// Runs `start` on a thread of lower priority and returns what it made; where no thread
/// can be started, on the caller's. A panic in `start` goes on in the caller.
pub(crate) fn lowered<T: Send>(start: impl Fn() -> T + Sync) -> T {
    let ran = std::thread::scope(|scope| {
        let spawned = std::thread::Builder::new().name("otel-start".into()).spawn_scoped(scope, || {
            lower_this_thread();
            start()
        });
        spawned.ok().map(|handle| handle.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)))
    });
    match ran {
        Some(made) => made,
        None => start(),
    }
}

/// Lowers the calling thread's priority (and that of the threads it starts from now on)
/// by [`NICER_BY`], to the lowest at most. Refusal is not an error: the threads then run
/// at the caller's priority, as before.
#[cfg(target_os = "linux")]
fn lower_this_thread() {
    use rustix::process::{getpriority_process, setpriority_process};
    if let Ok(nice) = getpriority_process(None) {
        let _ = setpriority_process(None, (nice + NICER_BY).min(19));
    }
}

#[cfg(not(target_os = "linux"))]
fn lower_this_thread() {}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn threads_started_from_the_lowered_thread_run_lower_and_the_caller_does_not() {
        let nice = |tid: Option<rustix::process::Pid>| rustix::process::getpriority_process(tid).unwrap();
        let before = nice(None);
        let (own, child) = lowered(|| {
            let child = std::thread::spawn(move || nice(None)).join().unwrap();
            (nice(None), child)
        });
        let expected = (before + NICER_BY).min(19);
        assert_eq!(own, expected, "the starting thread is lowered");
        assert_eq!(child, expected, "a thread it starts inherits the lower priority");
        assert_eq!(nice(None), before, "the caller's own priority is unchanged");
    }
}
