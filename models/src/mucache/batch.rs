//! Batching of a CM's Save and Inv messages to one upstream CM (§6 "Batching", §7.1: batches
//! of up to `size` items, sent when full or `timeout` after the first item entered).
//!
//! The paper cancels items at the sender: "invalidates and saves override previous
//! invalidates and saves on the same key". Half of that is unsafe (hazard X7): an Inv does more
//! than delete the caller's entry. At the caller's CM it vetoes the saves of pending requests
//! that used the old response and pops the dependency index to invalidate further upstream;
//! a later Save of a fresh response does neither. So a Save followed by an Inv of the same call
//! drops the Save (the Inv would delete it anyway), but an Inv followed by a Save keeps both, in
//! that order. The mutant `batch_drops_inv` lets the Save override the Inv, as the paper's
//! sentence reads.

use super::app::{CallArgs, Services};
use super::msg::ReqId;
use causim_sim::time::Time;

/// One item for an upstream CM, in the order its CM produced them.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Upstream {
    /// Cache `ca` = `ret`; `origin` is metadata for the history.
    Save { ca: CallArgs, ret: u64, visited: Services, origin: ReqId },
    /// `ca` is invalid; `since` is when the write that caused it took effect (metadata for the
    /// invalidation-time figure).
    Inv { ca: CallArgs, since: Time },
}

impl Upstream {
    pub fn ca(&self) -> CallArgs {
        match self {
            Upstream::Save { ca, .. } | Upstream::Inv { ca, .. } => *ca,
        }
    }
}

/// The items waiting for one upstream CM.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Batch {
    pub items: Vec<Upstream>,
}

impl Batch {
    /// Adds an item, cancelling what it overrides; `drops_inv` is the X7 mutant.
    pub fn add(&mut self, item: Upstream, drops_inv: bool) {
        let ca = item.ca();
        match item {
            // Save then Inv: the Save is moot. An Inv already waiting with nothing after it
            // says the same.
            Upstream::Inv { .. } => {
                self.items.retain(|i| !matches!(i, Upstream::Save { ca: c, .. } if *c == ca));
                if self.items.iter().any(|i| matches!(i, Upstream::Inv { ca: c, .. } if *c == ca)) {
                    return;
                }
            }
            // A newer Save replaces an older one; an Inv before it stays (unless mutated).
            Upstream::Save { .. } => {
                self.items.retain(|i| match i {
                    Upstream::Save { ca: c, .. } => *c != ca,
                    Upstream::Inv { ca: c, .. } => !drops_inv || *c != ca,
                });
            }
        }
        self.items.push(item);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mucache::app::EndpointRef;

    const CA: CallArgs = CallArgs { to: EndpointRef { service: 1, endpoint: 0 }, arg: 0 };
    const OTHER: CallArgs = CallArgs { to: EndpointRef { service: 1, endpoint: 0 }, arg: 1 };

    fn save(ca: CallArgs, ret: u64) -> Upstream {
        Upstream::Save { ca, ret, visited: 2, origin: ReqId(ret) }
    }
    fn inv(ca: CallArgs) -> Upstream {
        Upstream::Inv { ca, since: 0 }
    }

    #[test]
    fn a_later_inv_cancels_a_save_but_a_later_save_keeps_the_inv_before_it() {
        let mut b = Batch::default();
        for i in [save(CA, 1), save(OTHER, 2), inv(CA)] {
            b.add(i, false);
        }
        assert_eq!(b.items, [save(OTHER, 2), inv(CA)]);
        b.add(save(CA, 3), false);
        assert_eq!(b.items, [save(OTHER, 2), inv(CA), save(CA, 3)], "Inv then Save: both, in order (X7)");
        b.add(inv(CA), false);
        assert_eq!(b.items, [save(OTHER, 2), inv(CA)], "the Save is moot and the waiting Inv says it already");
        b.add(save(OTHER, 4), false);
        assert_eq!(b.items, [inv(CA), save(OTHER, 4)], "the newer Save replaces the older");
    }

    #[test]
    fn the_mutant_lets_a_save_override_the_inv_before_it() {
        let mut b = Batch::default();
        for i in [inv(CA), save(CA, 3)] {
            b.add(i, true);
        }
        assert_eq!(b.items, [save(CA, 3)]);
    }
}
