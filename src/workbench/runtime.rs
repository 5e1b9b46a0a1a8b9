//! The workbench's one background runtime: every piece of work that leaves the UI thread (the
//! parse, tooling jobs, replay builds, corpus scans) runs on a [`Lane`], and every lane follows
//! the same rules.
//!
//! - **Newest wins.** Each task carries a sequence number; submitting one makes it the only
//!   task whose replies are wanted. Tasks queued behind a running one are skipped but for the
//!   newest, a task cancelled or replaced before it starts never runs, and a running task's
//!   [`Ticket`] says when it is no longer wanted (long tasks look at it and stop early; the
//!   replies of a task no longer wanted are dropped).
//! - **A stale task never blocks a fresh one.** Engine calls cannot always be interrupted, so a
//!   new task does not wait for a task no longer wanted: that one is left to finish on its
//!   thread while a fresh thread takes the new one (at most `max_threads` at once; beyond that
//!   the new task waits for the older one).
//! - **A panic is a message, never a dead thread or a restored terminal.** Each task runs under
//!   `catch_unwind`; a panic reaches the UI as a [`BackgroundPanic`] and the lane goes on
//!   serving. The terminal's panic hook restores the terminal only for a panic on the UI
//!   thread itself (see [`crate::workbench::terminal`]).
//!
//! `RTBENCH_FAULT=<lane>` (`parse`, `tooling`, `replay`, `corpus`) makes that lane's first task
//! panic, so that tests can watch a background panic reach the screen.

use std::fmt;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::thread;

/// The stack of every thread that runs the engine. Patterns as deep as the reference accepts
/// compile on a helper thread of their own; the rest of the engine (JSON and content parsers on
/// nested values) gets this margin over the default 2 MiB.
pub(crate) const ENGINE_STACK: usize = 8 << 20;

/// A panic caught on a lane's thread, for the UI to show.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BackgroundPanic {
    /// The lane's name (`parse`, `tooling`, `replay`, `corpus`).
    pub lane: &'static str,
    /// The task that panicked.
    pub seq: u64,
    /// What the panic said.
    pub message: String,
}

impl fmt::Display for BackgroundPanic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "internal error on the {} thread (a bug; please report it): {}",
            self.lane, self.message
        )
    }
}

/// What a caught panic said.
pub(crate) fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into())
}

type Reply<R> = Arc<dyn Fn(u64, R) + Send + Sync>;
type Task<R> = Box<dyn FnOnce(&Ticket<R>) + Send>;

/// What a running task holds: its number, whether it is still wanted, and where its replies go.
pub struct Ticket<R> {
    seq: u64,
    wanted: Arc<AtomicU64>,
    reply: Reply<R>,
}

impl<R> Ticket<R> {
    /// A ticket outside any lane, always wanted, whose replies go to `reply` (a task run on
    /// the calling thread, as tests and a failed thread start do).
    pub fn detached(seq: u64, reply: impl Fn(u64, R) + Send + Sync + 'static) -> Ticket<R> {
        Ticket {
            seq,
            wanted: Arc::new(AtomicU64::new(seq)),
            reply: Arc::new(reply),
        }
    }

    /// The task's sequence number.
    pub fn seq(&self) -> u64 {
        self.seq
    }

    /// Whether the task's replies are still wanted (false once a newer task was submitted or
    /// the lane was cancelled).
    pub fn is_wanted(&self) -> bool {
        self.wanted.load(Ordering::SeqCst) == self.seq
    }

    /// Sends `value` to the UI if the task is still wanted; true when it was sent.
    pub fn reply(&self, value: R) -> bool {
        if !self.is_wanted() {
            return false;
        }
        (self.reply)(self.seq, value);
        true
    }
}

/// A newest-wins lane of background work (see the module documentation). Cloning shares it.
pub struct Lane<R> {
    name: &'static str,
    wanted: Arc<AtomicU64>,
    pool: Arc<Pool<R>>,
}

impl<R> Clone for Lane<R> {
    fn clone(&self) -> Self {
        Lane {
            name: self.name,
            wanted: Arc::clone(&self.wanted),
            pool: Arc::clone(&self.pool),
        }
    }
}

impl<R> fmt::Debug for Lane<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Lane")
            .field("name", &self.name)
            .field("wanted", &self.wanted.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

impl<R: Send + 'static> Lane<R> {
    /// Starts lane `name` (its threads are called `rtbench-<name>`): task replies go to
    /// `reply`, panics to `panicked`. At most `max_threads` threads run at once. The threads
    /// end when every clone of the lane is gone and their tasks are done.
    pub fn start(
        name: &'static str,
        max_threads: usize,
        reply: impl Fn(u64, R) + Send + Sync + 'static,
        panicked: impl Fn(BackgroundPanic) + Send + Sync + 'static,
    ) -> Lane<R> {
        let wanted = Arc::new(AtomicU64::new(0));
        let pool = Arc::new(Pool {
            name,
            max_threads: max_threads.max(1),
            reply: Arc::new(reply),
            panicked: Arc::new(panicked),
            wanted: Arc::clone(&wanted),
            alive: Arc::new(AtomicUsize::new(0)),
            current: Mutex::new(None),
        });
        Lane { name, wanted, pool }
    }

    /// Runs `task` as task number `seq`, which replaces every task submitted before.
    pub fn submit(&self, seq: u64, task: impl FnOnce(&Ticket<R>) + Send + 'static) {
        self.wanted.store(seq, Ordering::SeqCst);
        self.pool.submit(seq, Box::new(task));
    }

    /// No task's replies are wanted any more: a queued task is skipped, a running one's
    /// [`Ticket::is_wanted`] turns false.
    pub fn cancel(&self) {
        self.wanted.store(0, Ordering::SeqCst);
    }
}

/// A lane's threads: the current one, which takes new tasks, and any left finishing a task no
/// longer wanted.
struct Pool<R> {
    name: &'static str,
    max_threads: usize,
    reply: Reply<R>,
    panicked: Arc<dyn Fn(BackgroundPanic) + Send + Sync>,
    wanted: Arc<AtomicU64>,
    /// Threads running (the current one and those finishing).
    alive: Arc<AtomicUsize>,
    current: Mutex<Option<Thread<R>>>,
}

/// One of a lane's threads: where to send it tasks, and the task it is running (0: none).
struct Thread<R> {
    tx: mpsc::Sender<(u64, Task<R>)>,
    running: Arc<AtomicU64>,
}

impl<R: Send + 'static> Pool<R> {
    /// Sends the task (already the one wanted) to the current thread, or, when that one is
    /// busy with a task no longer wanted (or there is none), to a new thread, leaving the old
    /// one to finish and end.
    fn submit(&self, seq: u64, task: Task<R>) {
        let mut current = self.current.lock().unwrap_or_else(|e| e.into_inner());
        let busy = current
            .as_ref()
            .is_some_and(|t| t.running.load(Ordering::SeqCst) != 0);
        if (busy || current.is_none())
            && self.alive.load(Ordering::SeqCst) < self.max_threads
            && let Some(fresh) = self.spawn()
        {
            // The old thread's channel closes: it ends after its task.
            *current = Some(fresh);
        }
        match current.as_ref() {
            Some(t) => {
                let _ = t.tx.send((seq, task));
            }
            None => {
                // No thread could be started: run here rather than never.
                drop(current);
                let ticket = Ticket {
                    seq,
                    wanted: Arc::clone(&self.wanted),
                    reply: Arc::clone(&self.reply),
                };
                run_guarded(self.name, &ticket, task, &self.panicked);
            }
        }
    }

    fn spawn(&self) -> Option<Thread<R>> {
        let (tx, rx) = mpsc::channel::<(u64, Task<R>)>();
        let running = Arc::new(AtomicU64::new(0));
        let (reply, panicked, wanted, alive, busy) = (
            Arc::clone(&self.reply),
            Arc::clone(&self.panicked),
            Arc::clone(&self.wanted),
            Arc::clone(&self.alive),
            Arc::clone(&running),
        );
        let name = self.name;
        self.alive.fetch_add(1, Ordering::SeqCst);
        let spawned = thread::Builder::new()
            .name(format!("rtbench-{name}"))
            .stack_size(ENGINE_STACK)
            .spawn(move || {
                while let Ok(mut next) = rx.recv() {
                    // Serve only the newest task.
                    while let Ok(newer) = rx.try_recv() {
                        next = newer;
                    }
                    let (seq, task) = next;
                    // Busy first: a task sent from now on either sees it busy (and goes to a
                    // new thread) or has replaced this one, which the check below sees.
                    busy.store(seq, Ordering::SeqCst);
                    if wanted.load(Ordering::SeqCst) != seq {
                        // Cancelled or replaced before it started.
                        busy.store(0, Ordering::SeqCst);
                        continue;
                    }
                    let ticket = Ticket {
                        seq,
                        wanted: Arc::clone(&wanted),
                        reply: Arc::clone(&reply),
                    };
                    run_guarded(name, &ticket, task, &panicked);
                    busy.store(0, Ordering::SeqCst);
                }
                alive.fetch_sub(1, Ordering::SeqCst);
            });
        match spawned {
            Ok(_) => Some(Thread { tx, running }),
            Err(_) => {
                self.alive.fetch_sub(1, Ordering::SeqCst);
                None
            }
        }
    }
}

/// Runs one task, turning a panic into a [`BackgroundPanic`] for the UI (sent whether or not
/// the task is still wanted: a panic is a bug worth seeing either way).
fn run_guarded<R>(
    lane: &'static str,
    ticket: &Ticket<R>,
    task: Task<R>,
    panicked: &Arc<dyn Fn(BackgroundPanic) + Send + Sync>,
) {
    if let Err(p) = guarded(lane, ticket.seq, || task(ticket)) {
        panicked(p);
    }
}

/// Runs `f` for task `seq` of `lane`, catching a panic (and injecting one first when
/// `RTBENCH_FAULT` names the lane and it has not panicked yet).
pub(crate) fn guarded<T>(
    lane: &'static str,
    seq: u64,
    f: impl FnOnce() -> T,
) -> Result<T, BackgroundPanic> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        if take_fault(lane) {
            panic!("fault injected into the {lane} thread (RTBENCH_FAULT)");
        }
        f()
    }))
    .map_err(|payload| BackgroundPanic {
        lane,
        seq,
        message: panic_message(payload.as_ref()),
    })
}

/// Whether `lane` must panic now: `RTBENCH_FAULT` names it and it has not panicked yet.
fn take_fault(lane: &str) -> bool {
    static INJECTED: Mutex<Vec<String>> = Mutex::new(Vec::new());
    if std::env::var("RTBENCH_FAULT").ok().as_deref() != Some(lane) {
        return false;
    }
    let mut done = INJECTED.lock().unwrap_or_else(|e| e.into_inner());
    if done.iter().any(|l| l == lane) {
        return false;
    }
    done.push(lane.to_string());
    true
}

/// What tests of background work share.
#[cfg(test)]
pub(crate) mod testing {
    use std::sync::{Condvar, Mutex};

    /// Gates that tasks wait on until the test opens them.
    #[derive(Default)]
    pub(crate) struct Gates {
        open: Mutex<std::collections::HashSet<u64>>,
        changed: Condvar,
    }

    impl Gates {
        /// Waits until gate `seq` is open.
        pub(crate) fn wait(&self, seq: u64) {
            let mut open = self.open.lock().unwrap();
            while !open.contains(&seq) {
                open = self.changed.wait(open).unwrap();
            }
        }

        /// Opens gate `seq`.
        pub(crate) fn release(&self, seq: u64) {
            self.open.lock().unwrap().insert(seq);
            self.changed.notify_all();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::testing::Gates;
    use super::*;
    use std::time::Duration;

    type Events = mpsc::Receiver<Result<(u64, u64), BackgroundPanic>>;

    fn lane(max_threads: usize) -> (Lane<u64>, Events) {
        let (tx, rx) = mpsc::channel();
        let tx2 = tx.clone();
        let tx = Mutex::new(tx);
        let tx2 = Mutex::new(tx2);
        let lane = Lane::start(
            "test",
            max_threads,
            move |seq, v| {
                let _ = tx.lock().unwrap().send(Ok((seq, v)));
            },
            move |p| {
                let _ = tx2.lock().unwrap().send(Err(p));
            },
        );
        (lane, rx)
    }

    fn recv(rx: &Events) -> Result<(u64, u64), BackgroundPanic> {
        rx.recv_timeout(Duration::from_secs(10)).expect("a reply")
    }

    #[test]
    fn a_task_replies_with_its_number() {
        let (lane, rx) = lane(2);
        lane.submit(7, |t: &Ticket<u64>| {
            t.reply(t.seq() * 10);
        });
        assert_eq!(recv(&rx), Ok((7, 70)));
    }

    #[test]
    fn a_panic_is_reported_and_the_lane_goes_on() {
        let (lane, rx) = lane(2);
        lane.submit(1, |_: &Ticket<u64>| panic!("boom"));
        assert_eq!(
            recv(&rx),
            Err(BackgroundPanic {
                lane: "test",
                seq: 1,
                message: "boom".into()
            })
        );
        lane.submit(2, |t: &Ticket<u64>| {
            t.reply(2);
        });
        assert_eq!(recv(&rx), Ok((2, 2)));
    }

    #[test]
    fn a_running_task_sees_it_is_no_longer_wanted() {
        let (lane, rx) = lane(2);
        let gates = Arc::new(Gates::default());
        let g = Arc::clone(&gates);
        let (saw_tx, saw) = mpsc::channel();
        let (started_tx, started) = mpsc::channel();
        lane.submit(1, move |t: &Ticket<u64>| {
            started_tx.send(()).unwrap();
            g.wait(1);
            saw_tx.send(t.is_wanted()).unwrap();
            assert!(!t.reply(1), "a reply no longer wanted is not sent");
        });
        started.recv().unwrap();
        lane.submit(2, |t: &Ticket<u64>| {
            t.reply(2);
        });
        assert_eq!(recv(&rx), Ok((2, 2)));
        gates.release(1);
        assert!(!saw.recv().unwrap());
        assert!(rx.recv_timeout(Duration::from_millis(200)).is_err());
    }
}
