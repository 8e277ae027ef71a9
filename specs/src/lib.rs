//! causim-specs: TLA+ specs (in `specs/<protocol>/`), the TLC runner, and (later) Stateright
//! models hosting the `causim-models` state machines.

pub mod tlc;
