//! The partial order of a multi-function transaction's operations (`causim-history/2`).
//!
//! Where a workflow is one transaction (CausalMesh-TCC, FaaSTCC, HydroCache), its functions run
//! along the workflow's DAG, and a fan-out's branches run concurrently. Each operation names
//! its function (`fn`) and the transaction names the order between functions (`fn_after`,
//! pairs `[a, b]`: function `a` precedes function `b`). Operation `p` precedes operation `q`
//! when both belong to one function and `p` is listed first (program order), or when `p`'s
//! function precedes `q`'s, transitively. Two operations of functions neither of which precedes
//! the other are concurrent.
//!
//! The operations stay listed in one order, which must extend the partial order; among
//! concurrent writes of a key, the one listed last is the one the fan-in keeps (it is what later
//! functions read and what the transaction commits), as the protocols' joins do. So the final
//! write of a key is still its last listed write, and only which earlier writes a read must see
//! changes: the last listed write of its key among the operations that precede it.

/// At most this many functions in one transaction (the order is kept as an n×n table).
pub(crate) const FUNCTIONS_MAX: usize = 1024;

/// One transaction's function order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct FnOrder {
    /// Per operation of the transaction, in list order: its function's dense index.
    fns: Box<[u32]>,
    /// The functions as named in the history (`fn` values), by dense index, ascending.
    names: Box<[i64]>,
    /// `reach[a * n + b]`: function `a` precedes function `b` (transitively).
    reach: Box<[bool]>,
    /// `fn_after` as given, for export.
    edges: Box<[(i64, i64)]>,
}

impl FnOrder {
    /// The order of a transaction with `op_fns[i]` the function of its `i`th operation and
    /// `edges` its `fn_after` pairs. Errors name the field at fault: an operation without a
    /// function, a cycle, or a listing that contradicts the order.
    pub(crate) fn new(op_fns: &[Option<i64>], edges: &[(i64, i64)]) -> Result<FnOrder, String> {
        if let Some(i) = op_fns.iter().position(Option::is_none) {
            return Err(format!(
                "ops[{i}]: missing field `fn`: when some operation of a transaction names its function (or the transaction has \
                 `fn_after`), every one must"
            ));
        }
        let mut names: Vec<i64> = op_fns.iter().flatten().copied().chain(edges.iter().flat_map(|&(a, b)| [a, b])).collect();
        names.sort_unstable();
        names.dedup();
        let n = names.len();
        if n > FUNCTIONS_MAX {
            return Err(format!("a transaction may name at most {FUNCTIONS_MAX} functions, this one names {n}"));
        }
        let index = |f: i64| names.binary_search(&f).expect("every function is named") as u32;
        let fns: Box<[u32]> = op_fns.iter().map(|f| index(f.expect("checked above"))).collect();
        let mut succs = vec![Vec::new(); n];
        let mut preds_left = vec![0u32; n];
        for (e, &(a, b)) in edges.iter().enumerate() {
            if a == b {
                return Err(format!("fn_after[{e}]: [{a}, {b}] orders a function after itself"));
            }
            let (a, b) = (index(a) as usize, index(b) as usize);
            succs[a].push(b);
            preds_left[b] += 1;
        }
        // Kahn's algorithm: a topological order, or the cycle's existence.
        let mut topo: Vec<usize> = (0..n).filter(|&f| preds_left[f] == 0).collect();
        let mut next = 0;
        while next < topo.len() {
            for &b in &succs[topo[next]] {
                preds_left[b] -= 1;
                if preds_left[b] == 0 {
                    topo.push(b);
                }
            }
            next += 1;
        }
        if topo.len() < n {
            let f = (0..n).find(|&f| preds_left[f] > 0).expect("a function is left on the cycle");
            return Err(format!("fn_after: the function order has a cycle through function {}", names[f]));
        }
        let mut reach = vec![false; n * n];
        for &a in topo.iter().rev() {
            for &b in &succs[a] {
                reach[a * n + b] = true;
                for c in 0..n {
                    if reach[b * n + c] {
                        reach[a * n + c] = true;
                    }
                }
            }
        }
        let order = FnOrder { fns, names: names.into(), reach: reach.into(), edges: edges.into() };
        order.check_listing()?;
        Ok(order)
    }

    /// The operations must be listed in an order that extends the partial order: every
    /// operation of a function before every operation of the functions it precedes.
    fn check_listing(&self) -> Result<(), String> {
        let n = self.names.len();
        let mut first = vec![usize::MAX; n];
        let mut last = vec![0usize; n];
        for (i, &f) in self.fns.iter().enumerate() {
            first[f as usize] = first[f as usize].min(i);
            last[f as usize] = i;
        }
        for a in 0..n {
            for b in 0..n {
                if self.reach[a * n + b] && first[a] != usize::MAX && first[b] != usize::MAX && last[a] > first[b] {
                    return Err(format!(
                        "ops[{}] (function {}) is listed after ops[{}] (function {}), which fn_after orders after it; operations \
                         must be listed in an order that extends the function order",
                        last[a], self.names[a], first[b], self.names[b]
                    ));
                }
            }
        }
        Ok(())
    }

    /// Whether operation `p` precedes operation `q` (indices within the transaction).
    #[inline]
    pub(crate) fn precedes(&self, p: usize, q: usize) -> bool {
        let (a, b) = (self.fns[p] as usize, self.fns[q] as usize);
        if a == b { p < q } else { self.reach[a * self.names.len() + b] }
    }

    /// The function (as named in the history) of operation `p`.
    pub(crate) fn function(&self, p: usize) -> i64 {
        self.names[self.fns[p] as usize]
    }

    /// `fn_after` as given.
    pub(crate) fn edges(&self) -> &[(i64, i64)] {
        &self.edges
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fan_out_orders_the_source_before_the_branches_and_them_before_the_join() {
        // Source 0, branches 1 and 2, join 3; ops listed 0, 1, 2, 1, 3.
        let o = FnOrder::new(&[Some(0), Some(1), Some(2), Some(1), Some(3)], &[(0, 1), (0, 2), (1, 3), (2, 3)]).unwrap();
        assert!(o.precedes(0, 4), "transitively, through a branch");
        assert!(o.precedes(1, 3), "program order within branch 1");
        assert!(!o.precedes(1, 2) && !o.precedes(2, 1), "the branches are concurrent");
        assert!(!o.precedes(2, 3) && !o.precedes(3, 2));
        assert!(!o.precedes(4, 0) && !o.precedes(3, 1));
        assert_eq!((o.function(2), o.function(4)), (2, 3));
    }

    #[test]
    fn an_order_with_a_cycle_a_gap_or_a_contradicting_listing_is_refused() {
        let cycle = FnOrder::new(&[Some(0), Some(1)], &[(0, 1), (1, 0)]).unwrap_err();
        assert!(cycle.contains("cycle through function"), "{cycle}");
        let gap = FnOrder::new(&[Some(0), None], &[]).unwrap_err();
        assert!(gap.starts_with("ops[1]: missing field `fn`"), "{gap}");
        let listing = FnOrder::new(&[Some(1), Some(0)], &[(0, 1)]).unwrap_err();
        assert!(listing.starts_with("ops[1] (function 0) is listed after ops[0] (function 1)"), "{listing}");
        let selfloop = FnOrder::new(&[Some(0)], &[(0, 0)]).unwrap_err();
        assert!(selfloop.starts_with("fn_after[0]"), "{selfloop}");
    }

    #[test]
    fn a_function_without_operations_still_links_its_neighbours() {
        // 0 → 1 → 2, where 1 did nothing.
        let o = FnOrder::new(&[Some(0), Some(2)], &[(0, 1), (1, 2)]).unwrap();
        assert!(o.precedes(0, 1));
    }
}
