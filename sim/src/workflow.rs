//! Workflows: directed acyclic graphs of functions (chains, fan-out, fan-in with a join).
//!
//! A workflow runs as one client session: the scheduler places each function on a worker when
//! its predecessors have finished, and hands it the *workflow context* (the protocol's client
//! metadata, such as CausalMesh's deps and local writes) that its predecessors produced. At a
//! fan-out the context is copied to each branch; at a join the protocol merges the branches'
//! contexts.

use petgraph::algo::toposort;
use petgraph::graphmap::DiGraphMap;
use serde::{Deserialize, Serialize};

/// The shape of a workflow, as written in a scenario.
///
/// `{"shape":"chain","functions":3}`, `{"shape":"fan_out","width":3,"join":true}`,
/// `{"shape":"dag","functions":4,"edges":[[0,1],[0,2],[1,3],[2,3]]}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "shape", rename_all = "snake_case", deny_unknown_fields)]
pub enum WorkflowShape {
    /// f0 → f1 → … → f(n−1).
    Chain { functions: u32 },
    /// A source f0 fans out to `width` parallel functions; with `join`, they fan in to a sink.
    FanOut {
        width: u32,
        #[serde(default)]
        join: bool,
    },
    /// Any DAG over functions `0..functions`.
    Dag { functions: u32, edges: Vec<(u32, u32)> },
}

/// A workflow shape compiled for the engine.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dag {
    preds: Vec<Vec<u32>>,
    succs: Vec<Vec<u32>>,
    is_chain: bool,
}

/// The most functions one workflow may have (a limit, so a typo cannot allocate a huge graph).
pub const FUNCTIONS_PER_WORKFLOW_MAX: u32 = 1024;

impl Dag {
    pub fn from_shape(shape: &WorkflowShape) -> Result<Dag, String> {
        let (n, edges): (u32, Vec<(u32, u32)>) = match shape {
            WorkflowShape::Chain { functions } => (*functions, (1..*functions).map(|i| (i - 1, i)).collect()),
            WorkflowShape::FanOut { width, join } => {
                if *width == 0 {
                    return Err("width must be at least 1".into());
                }
                let n = 1 + width + u32::from(*join);
                let mut edges: Vec<(u32, u32)> = (1..=*width).map(|b| (0, b)).collect();
                if *join {
                    edges.extend((1..=*width).map(|b| (b, n - 1)));
                }
                (n, edges)
            }
            WorkflowShape::Dag { functions, edges } => (*functions, edges.clone()),
        };
        Dag::new(n, &edges)
    }

    /// A DAG over `n` functions; function indexes in `edges` must be `< n`.
    pub fn new(n: u32, edges: &[(u32, u32)]) -> Result<Dag, String> {
        if n == 0 {
            return Err("a workflow needs at least one function".into());
        }
        if n > FUNCTIONS_PER_WORKFLOW_MAX {
            return Err(format!("a workflow may have at most {FUNCTIONS_PER_WORKFLOW_MAX} functions, got {n}"));
        }
        let mut graph = DiGraphMap::<u32, ()>::new();
        for f in 0..n {
            graph.add_node(f);
        }
        for &(a, b) in edges {
            if a >= n || b >= n {
                return Err(format!("edge [{a}, {b}] names a function outside 0..{n}"));
            }
            if a == b {
                return Err(format!("edge [{a}, {b}] is a self-loop"));
            }
            graph.add_edge(a, b, ());
        }
        if let Err(cycle) = toposort(&graph, None) {
            return Err(format!("the edges form a cycle through function {}", cycle.node_id()));
        }
        let mut preds = vec![Vec::new(); n as usize];
        let mut succs = vec![Vec::new(); n as usize];
        for (a, b, ()) in graph.all_edges() {
            preds[b as usize].push(a);
            succs[a as usize].push(b);
        }
        for list in preds.iter_mut().chain(succs.iter_mut()) {
            list.sort_unstable();
            list.dedup();
        }
        let is_chain = (0..n as usize).all(|f| preds[f].len() <= 1 && succs[f].len() <= 1 && (f == 0 || preds[f] == [f as u32 - 1]));
        Ok(Dag { preds, succs, is_chain })
    }

    /// This DAG with one more function that every current leaf precedes (a dummy join sink).
    pub fn with_join_sink(&self) -> Dag {
        let n = self.len() as u32;
        let mut edges: Vec<(u32, u32)> = (0..n).flat_map(|a| self.succs(a).iter().map(move |&b| (a, b))).collect();
        edges.extend((0..n).filter(|&f| self.is_sink(f)).map(|f| (f, n)));
        Dag::new(n + 1, &edges).expect("adding a sink keeps a DAG acyclic")
    }

    /// This DAG with one more function that precedes every current source (a dummy source).
    pub fn with_source(&self) -> Dag {
        let n = self.len() as u32;
        let mut edges: Vec<(u32, u32)> = self.edges().collect();
        edges.extend(self.sources().map(|f| (n, f)));
        Dag::new(n + 1, &edges).expect("adding a source keeps a DAG acyclic")
    }

    pub fn source_count(&self) -> usize {
        self.sources().count()
    }

    pub fn chain(n: u32) -> Dag {
        Dag::from_shape(&WorkflowShape::Chain { functions: n }).expect("chains are DAGs")
    }

    pub fn len(&self) -> usize {
        self.preds.len()
    }

    pub fn is_empty(&self) -> bool {
        self.preds.is_empty()
    }

    pub fn preds(&self, f: u32) -> &[u32] {
        &self.preds[f as usize]
    }

    pub fn succs(&self, f: u32) -> &[u32] {
        &self.succs[f as usize]
    }

    /// Every edge `(a, b)`, by `a` then `b`.
    pub fn edges(&self) -> impl Iterator<Item = (u32, u32)> + '_ {
        (0..self.len() as u32).flat_map(move |a| self.succs(a).iter().map(move |&b| (a, b)))
    }

    pub fn sources(&self) -> impl Iterator<Item = u32> + '_ {
        (0..self.len() as u32).filter(|&f| self.preds(f).is_empty())
    }

    pub fn is_sink(&self, f: u32) -> bool {
        self.succs(f).is_empty()
    }

    pub fn sink_count(&self) -> usize {
        (0..self.len() as u32).filter(|&f| self.is_sink(f)).count()
    }

    /// True for f0 → f1 → … : then the whole workflow is one totally ordered session.
    pub fn is_chain(&self) -> bool {
        self.is_chain
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_compile_to_the_expected_graphs() {
        let chain = Dag::from_shape(&WorkflowShape::Chain { functions: 3 }).unwrap();
        assert!(chain.is_chain());
        assert_eq!(chain.succs(0), [1]);
        assert_eq!(chain.sources().collect::<Vec<_>>(), [0]);
        assert!(chain.is_sink(2));

        let fan = Dag::from_shape(&WorkflowShape::FanOut { width: 3, join: true }).unwrap();
        assert!(!fan.is_chain());
        assert_eq!(fan.len(), 5);
        assert_eq!(fan.succs(0), [1, 2, 3]);
        assert_eq!(fan.preds(4), [1, 2, 3]);
        assert_eq!(fan.sink_count(), 1);

        let open = Dag::from_shape(&WorkflowShape::FanOut { width: 2, join: false }).unwrap();
        assert_eq!(open.sink_count(), 2);

        let joined = open.with_join_sink();
        assert_eq!(joined.sink_count(), 1);
        assert_eq!(joined.preds(3), [1, 2]);

        let roots = Dag::new(3, &[(0, 2), (1, 2)]).unwrap();
        assert_eq!(roots.source_count(), 2);
        let rooted = roots.with_source();
        assert_eq!(rooted.sources().collect::<Vec<_>>(), [3]);
        assert_eq!(rooted.succs(3), [0, 1]);
        assert_eq!(rooted.preds(2), [0, 1]);

        let single = Dag::chain(1);
        assert!(single.is_chain());
        assert!(single.is_sink(0));
    }

    #[test]
    fn bad_graphs_are_rejected_with_a_reason() {
        let cyclic = WorkflowShape::Dag { functions: 3, edges: vec![(0, 1), (1, 2), (2, 0)] };
        assert!(Dag::from_shape(&cyclic).unwrap_err().contains("cycle"));
        let outside = WorkflowShape::Dag { functions: 2, edges: vec![(0, 5)] };
        assert!(Dag::from_shape(&outside).unwrap_err().contains("outside"));
        assert!(Dag::from_shape(&WorkflowShape::Chain { functions: 0 }).is_err());
        assert!(Dag::from_shape(&WorkflowShape::Chain { functions: 5000 }).is_err());
    }
}
