//! The one place that decides how many threads a call uses, and the two
//! parallel primitives every kernel is written with.
//!
//! Results never depend on the thread count: work is split into units whose
//! boundaries are fixed by the input alone (one label, or one block of
//! `ROW_BLOCK` rows), each unit is computed sequentially, and the per-unit results
//! come back *in unit order* for the caller to reduce sequentially.
//! Small inputs stay on the calling thread: starting or waking a pool costs more
//! than scoring a few thousand values.

use std::collections::HashMap;
use std::ops::Range;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use crate::error::{MetricError, Result};

/// Rows per unit of work for per-row metrics. Fixed, so that reductions over
/// blocks happen in the same order whatever the thread count.
pub const ROW_BLOCK: usize = 8192;

/// Below this many scalar elements a call runs on the calling thread.
pub const PARALLEL_MIN_ELEMENTS: usize = 65_536;

/// Environment variable that caps the thread count (like `OMP_NUM_THREADS`).
pub const THREADS_ENV: &str = "TOXEVAL_NUM_THREADS";

/// Resolve a joblib-style `n_jobs` into a thread count >= 1.
///
/// `None` means all available cores; positive values are taken as given up to the
/// number of cores (more threads than cores only add switching to CPU-bound
/// kernels, and every count gets a pool that lives as long as the process, so the
/// pools stay as few as the cores); negative values count back from the number of
/// cores (-1 = all, -2 = all but one). `0` is an error. The result is capped by
/// `TOXEVAL_NUM_THREADS` when set.
pub fn resolve_threads(n_jobs: Option<i64>) -> Result<usize> {
    let cores = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    let requested = match n_jobs {
        None => cores,
        Some(0) => {
            return Err(MetricError::value(
                "n_jobs == 0 has no meaning; use None (all cores), a positive count, or -1",
            ))
        }
        Some(n) if n > 0 => usize::try_from(n).unwrap_or(usize::MAX).min(cores),
        Some(n) => {
            let back = usize::try_from(n.unsigned_abs()).unwrap_or(usize::MAX);
            cores.saturating_add(1).saturating_sub(back).max(1)
        }
    };
    let cap = std::env::var(THREADS_ENV)
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
        .filter(|&c| c > 0);
    Ok(match cap {
        Some(c) => requested.min(c),
        None => requested,
    }
    .max(1))
}

/// The pools of this process, and the process they belong to.
///
/// After `fork()` the child has only the thread that forked: the worker threads
/// of every pool made before the fork are gone, and a job queued on such a pool
/// would wait for them forever. So the pools are tagged with the process id and a
/// call from a different process (a forked child: `multiprocessing` on Linux,
/// PyTorch `DataLoader` workers, gunicorn) starts from an empty map and builds its
/// own pools.
struct Pools {
    pid: u32,
    by_threads: HashMap<usize, Arc<rayon::ThreadPool>>,
}

impl Pools {
    /// The pool of `threads` workers for process `pid`, if one was built.
    fn get(&mut self, pid: u32, threads: usize) -> Option<Arc<rayon::ThreadPool>> {
        if self.pid != pid {
            // Inherited from the parent: their workers do not exist in this
            // process. Dropping them would signal and wait on synchronisation state
            // whose other side is gone, so they are leaked (one map per fork).
            std::mem::forget(std::mem::take(&mut self.by_threads));
            self.pid = pid;
        }
        self.by_threads.get(&threads).map(Arc::clone)
    }
}

fn pools() -> &'static Mutex<Pools> {
    static POOLS: OnceLock<Mutex<Pools>> = OnceLock::new();
    POOLS.get_or_init(|| {
        Mutex::new(Pools {
            pid: std::process::id(),
            by_threads: HashMap::new(),
        })
    })
}

fn pool(threads: usize) -> Result<Arc<rayon::ThreadPool>> {
    pool_of_process(std::process::id(), threads)
}

fn pool_of_process(pid: u32, threads: usize) -> Result<Arc<rayon::ThreadPool>> {
    // A poisoned lock only means another thread panicked while inserting; the map is
    // still usable. The lock is not held while a pool starts its threads, so a fork
    // from another thread meanwhile does not leave the child's copy locked.
    let lock = || pools().lock().unwrap_or_else(|e| e.into_inner());
    if let Some(p) = lock().get(pid, threads) {
        return Ok(p);
    }
    let built = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(|i| format!("toxeval-{i}"))
        .build()
        .map_err(|e| MetricError::Threads(e.to_string()))?;
    let mut guard = lock();
    if let Some(p) = guard.get(pid, threads) {
        // Another thread built one first; use it so each count has one pool.
        return Ok(p);
    }
    let p = Arc::new(built);
    guard.by_threads.insert(threads, Arc::clone(&p));
    Ok(p)
}

/// How a call may run: resolved thread count plus the size that decides whether
/// parallelism pays off.
#[derive(Debug, Clone, Copy)]
pub struct Parallelism {
    pub threads: usize,
}

impl Parallelism {
    pub fn sequential() -> Self {
        Parallelism { threads: 1 }
    }

    pub fn new(n_jobs: Option<i64>) -> Result<Self> {
        Ok(Parallelism {
            threads: resolve_threads(n_jobs)?,
        })
    }

    /// Whether a call over `elements` scalars should use the pool.
    pub fn is_parallel_for(&self, elements: usize) -> bool {
        self.threads > 1 && elements >= PARALLEL_MIN_ELEMENTS
    }

    /// `(0..n).map(f)`, in parallel when worthwhile; results in index order.
    pub fn map<R, F>(&self, n: usize, elements: usize, f: F) -> Result<Vec<R>>
    where
        R: Send,
        F: Fn(usize) -> R + Sync + Send,
    {
        if !self.is_parallel_for(elements) || n <= 1 {
            return Ok((0..n).map(f).collect());
        }
        let p = pool(self.threads)?;
        Ok(shared_map(&p, self.threads.min(n), n, &f))
    }

    /// [`Parallelism::map`] over `n` workers, each with its own `state`, made by
    /// `init` on the calling thread before any worker starts.
    ///
    /// Why on the calling thread: glibc's malloc gives every thread its own arena,
    /// and memory freed into one arena is not reused by allocations on another.
    /// Big scratch buffers made inside the workers land in whichever thread ran
    /// the worker, which changes from call to call, so two passes in a row (the
    /// per-label and the micro pass of `multilabel_report`) could hold their
    /// buffers in different arenas and peak at the *sum* of the two instead of
    /// the larger one (0.45x or 0.58x of a float32 score matrix, by chance).
    /// Made here, every pass's buffers come from the caller's arena.
    pub fn map_init<T, R, I, F>(&self, n: usize, elements: usize, init: I, f: F) -> Result<Vec<R>>
    where
        T: Send,
        R: Send,
        I: FnMut() -> T,
        F: Fn(&mut T) -> R + Sync + Send,
    {
        let states: Vec<Mutex<T>> = std::iter::repeat_with(init)
            .take(n)
            .map(Mutex::new)
            .collect();
        self.map(n, elements, |w| {
            // Each worker index is taken once, so the lock is never contended; a
            // poisoned one only means that worker panicked (the panic is re-raised).
            let mut state = states[w].lock().unwrap_or_else(|e| e.into_inner());
            f(&mut state)
        })
    }

    /// Run `f` inside this call's thread pool, so that rayon primitives it uses
    /// (`par_sort_unstable`, `rayon::join`) get `threads` workers. The caller
    /// decides with [`Parallelism::is_parallel_for`] whether that pays off.
    pub fn install<R, F>(&self, f: F) -> Result<R>
    where
        R: Send,
        F: FnOnce() -> R + Send,
    {
        if self.threads <= 1 {
            return Ok(f());
        }
        Ok(pool(self.threads)?.install(f))
    }

    /// Apply `f` to consecutive blocks of `ROW_BLOCK` rows out of `n_rows`;
    /// results in block order. `row_width` is the number of scalars per row.
    pub fn map_row_blocks<R, F>(&self, n_rows: usize, row_width: usize, f: F) -> Result<Vec<R>>
    where
        R: Send,
        F: Fn(Range<usize>) -> R + Sync + Send,
    {
        let n_blocks = n_rows.div_ceil(ROW_BLOCK);
        self.map(n_blocks, n_rows.saturating_mul(row_width), |b| {
            let start = b * ROW_BLOCK;
            f(start..(start + ROW_BLOCK).min(n_rows))
        })
    }
}

/// `(0..n).map(f)` on the calling thread and `workers - 1` jobs of `pool`; results
/// in index order (see [`run_shared`]).
fn shared_map<R, F>(pool: &rayon::ThreadPool, workers: usize, n: usize, f: &F) -> Vec<R>
where
    R: Send,
    F: Fn(usize) -> R + Sync + Send,
{
    collect_shared(Some(pool), workers, n, f)
}

/// `items.into_iter().map(f)` on the pool the caller runs in (inside
/// [`Parallelism::install`]), one item per task, all of its threads taking part;
/// results in item order. For kernels that split their work into a few large units
/// of their own (buckets, row blocks) and decided already that the pool pays off.
pub fn map_in_pool<T, R, F>(items: Vec<T>, f: F) -> Vec<R>
where
    T: Send,
    R: Send,
    F: Fn(T) -> R + Sync,
{
    let n = items.len();
    let items: Vec<Mutex<Option<T>>> = items.into_iter().map(|t| Mutex::new(Some(t))).collect();
    collect_shared(None, rayon::current_num_threads(), n, &|i| {
        // Each index is taken once, so the lock is never contended and the item is
        // still there; a poisoned lock only means another task panicked (re-raised).
        let item = items[i].lock().unwrap_or_else(|e| e.into_inner()).take();
        item.map(&f)
    })
    .into_iter()
    .flatten()
    .collect()
}

/// `(0..n).map(f)` through [`run_shared`], each result stored in its own slot;
/// results in index order.
fn collect_shared<R: Send>(
    pool: Option<&rayon::ThreadPool>,
    workers: usize,
    n: usize,
    f: &(dyn Fn(usize) -> R + Sync),
) -> Vec<R> {
    let slots: Vec<Mutex<Option<R>>> = (0..n).map(|_| Mutex::new(None)).collect();
    run_shared(pool, workers, n, &|i| {
        let r = f(i);
        *slots[i].lock().unwrap_or_else(|e| e.into_inner()) = Some(r);
    });
    // `run_shared` returns once every index ran (a panic in `f` is re-raised before
    // this point), so every slot is filled.
    slots
        .into_iter()
        .filter_map(|m| m.into_inner().unwrap_or_else(|e| e.into_inner()))
        .collect()
}

/// Run `task(i)` for every `i` in `0..n` on the calling thread and `workers - 1`
/// jobs of `pool` (the pool the caller runs in when `None`), which take the next
/// index from a shared counter until none is left.
///
/// The calling thread works from the start instead of handing the whole call to the
/// pool and sleeping: a pool thread that slept since the last call takes a while to
/// wake (most of a millisecond on a virtual machine whose other CPU was idle), and
/// with `install` the call waited for two such wake-ups in a row (the caller's job,
/// then its split). Here the caller does every index on its own until a helper is
/// awake, so a late helper costs nothing but its share.
///
/// `task` is called through a `dyn` reference: one copy of rayon's scope and job
/// machinery serves every kernel, where a generic closure would compile one per
/// call site and score type (most of the native module's size). The indirect call
/// happens once per unit of work (a label, a block of rows, a bucket run), never
/// per element.
fn run_shared(
    pool: Option<&rayon::ThreadPool>,
    workers: usize,
    n: usize,
    task: &(dyn Fn(usize) + Sync),
) {
    let next = AtomicUsize::new(0);
    let work = || loop {
        let i = next.fetch_add(1, Ordering::Relaxed);
        if i >= n {
            break;
        }
        task(i);
    };
    let workers = workers.min(n);
    match pool {
        Some(p) => p.in_place_scope(|s| spawn_and_work(s, workers, &work)),
        None => rayon::in_place_scope(|s| spawn_and_work(s, workers, &work)),
    }
}

/// `workers - 1` jobs of `work` on scope `s`, and `work` on the calling thread.
fn spawn_and_work<'s>(s: &rayon::Scope<'s>, workers: usize, work: &'s (dyn Fn() + Sync)) {
    for _ in 1..workers {
        s.spawn(move |_| work());
    }
    work();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolve() {
        assert!(resolve_threads(Some(0)).is_err());
        assert_eq!(resolve_threads(Some(1)).unwrap(), 1);
        assert!(resolve_threads(None).unwrap() >= 1);
        assert!(resolve_threads(Some(-1)).unwrap() >= 1);
        assert_eq!(resolve_threads(Some(-1000)).unwrap(), 1);
        // More than the cores gets the cores (no pool of a million threads).
        let all = resolve_threads(None).unwrap();
        assert_eq!(resolve_threads(Some(1_000_000)).unwrap(), all);
        assert_eq!(resolve_threads(Some(i64::MAX)).unwrap(), all);
    }

    /// The caller and the pool's helpers share the indices: every index once, in
    /// order, whether a helper joins early, late or not at all, and also when the
    /// caller is itself a pool thread (a kernel mapping inside `install`).
    #[test]
    fn shared_map_returns_every_index_in_order() {
        for threads in [2, 3] {
            let par = Parallelism { threads };
            for n in [2, 3, 17, 1000] {
                let want: Vec<usize> = (0..n).map(|i| i * i).collect();
                let got = par.map(n, PARALLEL_MIN_ELEMENTS, |i| i * i).unwrap();
                assert_eq!(got, want);
                let nested = par
                    .install(|| par.map(n, PARALLEL_MIN_ELEMENTS, |i| i * i).unwrap())
                    .unwrap();
                assert_eq!(nested, want);
            }
        }
        // A slow index on one thread: the other one takes the rest.
        let par = Parallelism { threads: 2 };
        let got = par
            .map(64, PARALLEL_MIN_ELEMENTS, |i| {
                if i == 0 {
                    std::thread::sleep(std::time::Duration::from_millis(20));
                }
                i
            })
            .unwrap();
        assert_eq!(got, (0..64).collect::<Vec<_>>());
    }

    /// `map_in_pool` gives every item to exactly one task and the results in item
    /// order, inside a pool of any size and on the calling thread alone.
    #[test]
    fn map_in_pool_keeps_item_order() {
        for threads in [1, 2, 3] {
            let par = Parallelism { threads };
            for n in [0, 1, 2, 17, 300] {
                let items: Vec<String> = (0..n).map(|i| i.to_string()).collect();
                let want: Vec<usize> = (0..n).map(|i| i * 2).collect();
                let got = par
                    .install(|| map_in_pool(items, |s| s.parse::<usize>().unwrap() * 2))
                    .unwrap();
                assert_eq!(got, want);
            }
        }
    }

    /// A panic in one task reaches the caller (never a result with a hole in it),
    /// from the calling thread's share and from a helper's.
    #[test]
    fn a_panicking_task_panics_the_call() {
        for threads in [1, 2] {
            let par = Parallelism { threads };
            for bad in [0, 63] {
                let r = std::panic::catch_unwind(|| {
                    par.map(64, PARALLEL_MIN_ELEMENTS, |i| {
                        assert_ne!(i, bad, "task {i} fails");
                        i
                    })
                });
                assert!(r.is_err(), "threads {threads}, failing task {bad}");
            }
        }
    }

    /// Every worker's state is made on the calling thread (its allocations come
    /// from the caller's arena) and each worker gets its own one.
    #[test]
    fn map_init_makes_states_on_the_caller() {
        let caller = std::thread::current().id();
        for threads in [1, 2, 3] {
            let par = Parallelism { threads };
            for n in [1, 2, 5] {
                let mut made = 0;
                let got = par
                    .map_init(
                        n,
                        PARALLEL_MIN_ELEMENTS,
                        || {
                            made += 1;
                            (std::thread::current().id(), made, 0usize)
                        },
                        |state| {
                            state.2 += 1;
                            std::thread::sleep(std::time::Duration::from_millis(2));
                            *state
                        },
                    )
                    .unwrap();
                assert_eq!(got.len(), n);
                for (w, (made_on, id, uses)) in got.into_iter().enumerate() {
                    assert_eq!(made_on, caller);
                    assert_eq!((id, uses), (w + 1, 1));
                }
            }
        }
    }

    /// A call from another process (a forked child) gets a new pool: the
    /// parent's workers do not exist there. The same process keeps its pool.
    #[test]
    fn a_new_process_gets_new_pools() {
        // Process ids no real process here has, so other tests' pools are untouched.
        let first = pool_of_process(u32::MAX - 1, 2).unwrap();
        let again = pool_of_process(u32::MAX - 1, 2).unwrap();
        assert!(Arc::ptr_eq(&first, &again));
        let child = pool_of_process(u32::MAX - 2, 2).unwrap();
        assert!(!Arc::ptr_eq(&first, &child));
        assert_eq!(child.install(rayon::current_num_threads), 2);
        // Back in this process: its own pools, built afresh, still work.
        let here = pool(2).unwrap();
        assert_eq!(here.install(|| (0..100).sum::<i32>()), 4950);
    }

    #[test]
    fn blocks_cover_rows_in_order() {
        for threads in [1, 2, 3] {
            let par = Parallelism { threads };
            let n = ROW_BLOCK * 3 + 17;
            let blocks = par.map_row_blocks(n, 100, |r| r).unwrap();
            assert_eq!(blocks.first().unwrap().start, 0);
            assert_eq!(blocks.last().unwrap().end, n);
            for w in blocks.windows(2) {
                assert_eq!(w[0].end, w[1].start);
            }
        }
    }
}
