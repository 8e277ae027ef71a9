//! A memory budget for a Stateright check (`causim model-check --max-memory MB`).
//!
//! Stateright bounds a check by states (`target_state_count`) or time, not by memory, and a
//! running checker cannot be stopped from outside. So the model is wrapped: [`Stoppable`]
//! behaves exactly like the model it wraps until its stop flag is raised, and from then on
//! every state is a dead end (no actions) whose properties are not judged (an `always` holds,
//! a `sometimes` does not happen, an `eventually` is satisfied), so the checker drains the
//! states it has queued without generating or counting more, and ends. Its state count is then
//! the number explored before the stop.
//!
//! [`MemoryWatch`] raises the flag: a thread that reads the process's resident set size
//! (`VmRSS` of `/proc/self/status`, Linux only) every [`POLL`] and stops the check once it
//! passes the budget. The budget is therefore on the whole process's resident memory (what the
//! operating system would kill it for), measured, not estimated from a states-per-MB guess;
//! the check may overshoot it by what it allocates within one poll.

use causim_specs::stateright::{Expectation, Model, Property};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

/// How often the memory watch reads the resident set size.
pub const POLL: Duration = Duration::from_millis(20);

/// The most properties a wrapped model may have (each needs its own function pointer).
const PROPERTIES_MAX: usize = 16;

/// `M`, stoppable from another thread: see the module's essay.
pub struct Stoppable<M: Model> {
    inner: M,
    inner_properties: Vec<Property<M>>,
    stop: Arc<AtomicBool>,
}

impl<M: Model> Stoppable<M> {
    /// Wraps `inner`; raising `stop` ends the check. Fails for a model of more than 16
    /// properties.
    pub fn new(inner: M, stop: Arc<AtomicBool>) -> Result<Stoppable<M>, String> {
        let inner_properties = inner.properties();
        if inner_properties.len() > PROPERTIES_MAX {
            return Err(format!("a stoppable model has at most {PROPERTIES_MAX} properties, not {}", inner_properties.len()));
        }
        Ok(Stoppable { inner, inner_properties, stop })
    }

    /// The wrapped model.
    pub fn inner(&self) -> &M {
        &self.inner
    }

    /// Whether the check was stopped.
    pub fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }
}

/// Property `I` of the wrapped model, judged only while the check runs. Stateright's properties
/// are plain function pointers, so each index gets its own instance of this function.
fn condition<M: Model, const I: usize>(model: &Stoppable<M>, state: &M::State) -> bool {
    let property = &model.inner_properties[I];
    if model.stopped() {
        // Not judged: neither a violation nor a discovery, nor an unfinished `eventually`.
        return property.expectation != Expectation::Sometimes;
    }
    (property.condition)(&model.inner, state)
}

impl<M: Model> Model for Stoppable<M> {
    type State = M::State;
    type Action = M::Action;

    fn init_states(&self) -> Vec<M::State> {
        self.inner.init_states()
    }

    fn actions(&self, state: &M::State, actions: &mut Vec<M::Action>) {
        if !self.stopped() {
            self.inner.actions(state, actions);
        }
    }

    fn next_state(&self, state: &M::State, action: M::Action) -> Option<M::State> {
        self.inner.next_state(state, action)
    }

    fn within_boundary(&self, state: &M::State) -> bool {
        self.inner.within_boundary(state)
    }

    fn properties(&self) -> Vec<Property<Self>> {
        let conditions: [fn(&Self, &M::State) -> bool; PROPERTIES_MAX] = [
            condition::<M, 0>,
            condition::<M, 1>,
            condition::<M, 2>,
            condition::<M, 3>,
            condition::<M, 4>,
            condition::<M, 5>,
            condition::<M, 6>,
            condition::<M, 7>,
            condition::<M, 8>,
            condition::<M, 9>,
            condition::<M, 10>,
            condition::<M, 11>,
            condition::<M, 12>,
            condition::<M, 13>,
            condition::<M, 14>,
            condition::<M, 15>,
        ];
        self.inner_properties
            .iter()
            .zip(conditions)
            .map(|(p, condition)| Property { expectation: p.expectation.clone(), name: p.name, condition })
            .collect()
    }
}

/// The resident set size of this process in bytes (`VmRSS`), or why it cannot be read.
pub fn resident_bytes() -> Result<u64, String> {
    status_field("VmRSS")
}

/// The peak resident set size of this process in bytes (`VmHWM`), or why it cannot be read.
pub fn peak_resident_bytes() -> Result<u64, String> {
    status_field("VmHWM")
}

fn status_field(field: &str) -> Result<u64, String> {
    let text = std::fs::read_to_string("/proc/self/status").map_err(|e| format!("cannot read /proc/self/status: {e}"))?;
    let line = text
        .lines()
        .find_map(|l| l.strip_prefix(field).and_then(|rest| rest.strip_prefix(':')))
        .ok_or_else(|| format!("/proc/self/status has no {field} line"))?;
    let kib: u64 = line
        .trim()
        .strip_suffix("kB")
        .and_then(|n| n.trim().parse().ok())
        .ok_or_else(|| format!("/proc/self/status: cannot read {field} {:?}", line.trim()))?;
    Ok(kib.saturating_mul(1024))
}

/// A thread raising a stop flag once the process's resident memory passes a budget.
pub struct MemoryWatch {
    done: Arc<AtomicBool>,
    /// The resident size seen when the flag was raised (0: not raised).
    tripped_at: Arc<AtomicU64>,
    thread: Option<JoinHandle<()>>,
}

impl MemoryWatch {
    /// Starts watching; raises `stop` once resident memory exceeds `budget_bytes`. Fails at
    /// once where the resident size cannot be read (not Linux).
    pub fn start(budget_bytes: u64, stop: Arc<AtomicBool>) -> Result<MemoryWatch, String> {
        resident_bytes()?;
        let done = Arc::new(AtomicBool::new(false));
        let tripped_at = Arc::new(AtomicU64::new(0));
        let (d, t) = (Arc::clone(&done), Arc::clone(&tripped_at));
        let thread = std::thread::Builder::new()
            .name("memory-watch".into())
            .spawn(move || {
                while !d.load(Ordering::Relaxed) {
                    if let Ok(rss) = resident_bytes()
                        && rss > budget_bytes
                    {
                        t.store(rss, Ordering::Relaxed);
                        stop.store(true, Ordering::Relaxed);
                        return;
                    }
                    std::thread::sleep(POLL);
                }
            })
            .map_err(|e| format!("cannot start the memory watch: {e}"))?;
        Ok(MemoryWatch { done, tripped_at, thread: Some(thread) })
    }

    /// Stops watching; returns the resident size at which the budget was found exhausted, if
    /// it was.
    pub fn finish(mut self) -> Option<u64> {
        self.done.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        let rss = self.tripped_at.load(Ordering::Relaxed);
        (rss > 0).then_some(rss)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use causim_specs::stateright::Checker;

    /// Counts up from 0 by 1 or 2, forever; "below 1000" always holds, "reaches 500" sometimes.
    struct Counter;

    impl Model for Counter {
        type State = u32;
        type Action = u32;
        fn init_states(&self) -> Vec<u32> {
            vec![0]
        }
        fn actions(&self, _: &u32, actions: &mut Vec<u32>) {
            actions.extend([1, 2]);
        }
        fn next_state(&self, s: &u32, a: u32) -> Option<u32> {
            Some(s + a)
        }
        fn properties(&self) -> Vec<Property<Self>> {
            vec![Property::always("below 1000", |_, s| *s < 1000), Property::sometimes("reaches 500", |_, s| *s == 500)]
        }
    }

    #[test]
    fn behaves_like_the_model_until_stopped() {
        let stop = Arc::new(AtomicBool::new(false));
        let checker = Stoppable::new(Counter, Arc::clone(&stop)).unwrap().checker().target_state_count(3000).spawn_bfs().join();
        assert!(checker.discovery("reaches 500").is_some());
        assert!(checker.discovery("below 1000").is_some());
        assert_eq!(checker.model().properties().iter().map(|p| p.name).collect::<Vec<_>>(), ["below 1000", "reaches 500"]);
    }

    #[test]
    fn a_raised_flag_ends_the_check_without_verdicts() {
        let stop = Arc::new(AtomicBool::new(true));
        let checker = Stoppable::new(Counter, stop).unwrap().checker().spawn_bfs().join();
        assert_eq!(checker.unique_state_count(), 1, "only the initial state");
        assert!(checker.discoveries().is_empty());
    }

    #[test]
    fn reads_its_own_resident_size() {
        let rss = resident_bytes().unwrap();
        assert!(rss > 1 << 20 && rss <= peak_resident_bytes().unwrap(), "{rss}");
    }

    #[test]
    fn a_budget_below_the_resident_size_trips_at_once() {
        let stop = Arc::new(AtomicBool::new(false));
        let watch = MemoryWatch::start(1, Arc::clone(&stop)).unwrap();
        while !stop.load(Ordering::Relaxed) {
            std::thread::sleep(POLL);
        }
        assert!(watch.finish().is_some_and(|rss| rss > 1));
    }
}
