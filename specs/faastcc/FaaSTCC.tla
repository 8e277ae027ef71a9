------------------------------- MODULE FaaSTCC -------------------------------
(***************************************************************************)
(* FaaSTCC (Lykhenko, Soares, Rodrigues; Middleware '21): transactional    *)
(* causal consistency for serverless workflows with promises and snapshot *)
(* intervals.  Written from the paper (sections 4.1-4.9, Algorithms 1-2), *)
(* not from causim's Rust model; README.md next to this file maps each    *)
(* action to the paper and lists the choices.                              *)
(*                                                                         *)
(*   - The store keeps every version of each key with its commit          *)
(*     timestamp.  A read at snapshot sn returns the newest version at or  *)
(*     below sn with a promise: the horizon up to which it is known to be  *)
(*     its key's latest (section 4.2): one below the next version's        *)
(*     timestamp if there is one, else the store's stable time.           *)
(*   - Each worker's cache holds one entry <value, t, promise> per key,     *)
(*     pre-warmed with every key's initial version (promise 0) and         *)
(*     refreshed by the store's pushes of new versions (section 4.3).      *)
(*   - A workflow carries a snapshot interval [lo, hi], from [0, Inf]:     *)
(*     a cached entry may be read iff p >= lo /\ t <= hi (Eq. 1), else the *)
(*     cache reads the store at hi; every read narrows the interval to     *)
(*     [max(lo, t), min(hi, p)] (Eq. 2); a join intersects its parents'    *)
(*     intervals and aborts if the result is empty (Eq. 3).               *)
(*   - The sink commits the buffered writes with a timestamp above lo.     *)
(*                                                                         *)
(* Workflows follow fixed plans (CONSTANTS Plan, WritesOf), every read    *)
(* picks its worker freely, and pushes reach each cache at any time.      *)
(***************************************************************************)
EXTENDS Naturals, Sequences, FiniteSets, TLC

CONSTANTS
    N,         \* number of workers (caches); they are 0..N-1
    Keys,      \* keys (model values)
    Txns,      \* workflows, each one transaction (model values)
    InitVal,   \* model value: the writer of every key's initial version
    Plan,      \* Plan[t]: a sequence of branches, each a sequence of keys to read
    WritesOf,  \* WritesOf[t]: the keys t writes, after its reads
    Mutant     \* "none", or a named bug of the Rust model the spec can express

Mutants == {"none", "promise_off_by_one", "no_interval_narrowing", "no_fanin_merge"}

ASSUME N \in Nat /\ N >= 1
ASSUME Mutant \in Mutants

\* No upper bound: larger than any timestamp the bounds reach.
Inf == 1000

VARIABLES
    store,  \* store[k]  : the versions of k, a set of [ts, val] (val: the writer)
    clock,  \* the store's clock: the last commit timestamp (its stable time)
    cache,  \* cache[w][k] : the entry [t, p, val] of worker w's cache for k
    known,  \* known[w]  : the store's stable time w last heard of (its pushes)
    si,     \* si[t][b]  : the snapshot interval <<lo, hi>> of branch b of workflow t
    pc,     \* pc[t][b]  : how many reads branch b of t has done
    rs,     \* rs[t][b]  : what branch b of t read: a set of [key, ts, val]
    phase   \* phase[t]  : "read", "joined", "done" (committed) or "aborted"

vars == <<store, clock, cache, known, si, pc, rs, phase>>

Workers == 0..(N - 1)
Branches(t) == 1..Len(Plan[t])
Max(a, b) == IF a >= b THEN a ELSE b
Min(a, b) == IF a <= b THEN a ELSE b
MaxOf(S) == CHOOSE m \in S : \A x \in S : x <= m
MinOf(S) == CHOOSE m \in S : \A x \in S : m <= x

-----------------------------------------------------------------------------
(* The store (section 4.1-4.2).                                             *)

\* The newest version of k at or below snapshot sn.
At(k, sn) == LET vs == {v \in store[k] : v.ts <= sn}
             IN  CHOOSE v \in vs : \A u \in vs : u.ts <= v.ts

\* The promise of the version of k read at sn: below the next version, if any
\* (the mutant promise_off_by_one promises up to the next version itself), else
\* up to the stable time (or sn, whichever is larger).
Promise(k, sn) ==
    LET v    == At(k, sn)
        next == {u \in store[k] : u.ts > v.ts}
        bound == Max(clock, sn)
    IN  IF next = {} THEN bound
        ELSE LET tn == MinOf({u.ts : u \in next})
             IN  Min(bound, IF Mutant = "promise_off_by_one" THEN tn ELSE tn - 1)

-----------------------------------------------------------------------------

Lo(i) == i[1]
Hi(i) == i[2]
Narrow(i, t, p) == IF Mutant = "no_interval_narrowing" THEN i ELSE <<Max(Lo(i), t), Min(Hi(i), p)>>
Finished(t, b) == pc[t][b] = Len(Plan[t][b])
ReadSet(t) == UNION {rs[t][b] : b \in Branches(t)}

\* The interval a workflow's later functions start from: after one branch, its
\* interval; after several, their intersection (Eq. 3), or (mutant
\* no_fanin_merge) the first branch's.
Joined(t) ==
    IF Len(Plan[t]) = 1 \/ Mutant = "no_fanin_merge" THEN si[t][1]
    ELSE <<MaxOf({Lo(si[t][b]) : b \in Branches(t)}), MinOf({Hi(si[t][b]) : b \in Branches(t)})>>

\* The snapshot a cache reads the store at for a reader in interval i: hi, or,
\* when hi is unbounded, the stable time it knows, but not below lo.
CacheSnapshot(w, i) == IF Hi(i) = Inf THEN Max(known[w], Lo(i)) ELSE Hi(i)

\* Eq. 1: entry e may be read in interval i.
Consistent(e, i) == e.p >= Lo(i) /\ e.t <= Hi(i)

\* A store answer f is fresher than entry e: a newer version, or the same one
\* promised longer.  (Every answer Read installs is: a stale entry's promise
\* lies below the snapshot.)
Fresher(f, e) == f.t > e.t \/ (f.t = e.t /\ f.p > e.p)

\* Read's choices, one each here: whether the cache serves its entry, the
\* snapshot of the store's answer and its promise.  Sets so that trace
\* validation can widen them (the Rust store is partitioned, its stable time
\* lags, and its cache answers concurrent requests; specs/README.md, "Trace
\* validation").
Serves(e, i) == {Consistent(e, i)}
Snapshots(w, i) == {CacheSnapshot(w, i)}
Promises(k, sn) == {Promise(k, sn)}

\* Every cache's entry for every key at the start: pre-warmed, the initial
\* version promised up to 0 (trace validation replaces it for caches that
\* start empty).
InitEntry == [t |-> 0, p |-> 0, val |-> InitVal]

TypeOK ==
    /\ clock \in Nat
    /\ \A w \in Workers : \A k \in Keys : cache[w][k].t <= cache[w][k].p
    /\ \A t \in Txns : phase[t] \in {"read", "joined", "done", "aborted"}

Init ==
    /\ store = [k \in Keys |-> {[ts |-> 0, val |-> InitVal]}]
    /\ clock = 0
    /\ cache = [w \in Workers |-> [k \in Keys |-> InitEntry]]
    /\ known = [w \in Workers |-> 0]
    /\ si    = [t \in Txns |-> [b \in Branches(t) |-> <<0, Inf>>]]
    /\ pc    = [t \in Txns |-> [b \in Branches(t) |-> 0]]
    /\ rs    = [t \in Txns |-> [b \in Branches(t) |-> {}]]
    /\ phase = [t \in Txns |-> "read"]

(* A function of branch b of workflow t reads its next key at worker w      *)
(* (Alg. 1 LIBRARY_READ_TX, Alg. 2 CACHE_READ_TX).  A cached entry that     *)
(* satisfies Eq. 1 is served; otherwise the cache reads the store at hi (at  *)
(* the stable time it knows, but not below lo, when hi is unbounded) and     *)
(* installs the answer, unless the entry is newer than hi (it is "replaced": *)
(* an older version is served and the cache keeps its newer one).  Either    *)
(* way the interval narrows (Eq. 2).  The store keeps every version, so a   *)
(* read never aborts.  Serves, Snapshots and Promises give one choice each   *)
(* here; the answer installed is always fresher than a stale entry, so the  *)
(* Fresher test matters only where trace validation lets a cache fetch an    *)
(* entry it could serve.                                                     *)
Read(t, b, w) ==
    /\ phase[t] = "read"
    /\ ~Finished(t, b)
    /\ LET k  == Plan[t][b][pc[t][b] + 1]
           i  == si[t][b]
           e  == cache[w][k]
       IN  \E hit \in Serves(e, i) : \E sn \in Snapshots(w, i) : \E pr \in Promises(k, sn) :
           LET v   == At(k, sn)
               f   == [t |-> v.ts, p |-> pr, val |-> v.val]
               got == IF hit THEN e ELSE f
           IN  /\ cache' = IF hit \/ Hi(i) < e.t \/ ~Fresher(f, e) THEN cache ELSE [cache EXCEPT ![w][k] = f]
               /\ si' = [si EXCEPT ![t][b] = Narrow(i, got.t, got.p)]
               /\ rs' = [rs EXCEPT ![t][b] = @ \cup {[key |-> k, ts |-> got.t, val |-> got.val]}]
               /\ pc' = [pc EXCEPT ![t][b] = @ + 1]
    /\ UNCHANGED <<store, clock, known, phase>>

(* The function after the branches starts from their merged interval       *)
(* (Alg. 1 MERGE_CONTEXTS): empty means the branches read incompatible      *)
(* snapshots, and the workflow aborts.                                       *)
Join(t) ==
    /\ phase[t] = "read"
    /\ \A b \in Branches(t) : Finished(t, b)
    /\ phase' = [phase EXCEPT ![t] = IF Lo(Joined(t)) > Hi(Joined(t)) THEN "aborted" ELSE "joined"]
    /\ UNCHANGED <<store, clock, cache, known, si, pc, rs>>

(* The sink commits the write set (Alg. 1 COMMIT): the store gives it a      *)
(* timestamp above its clock and above the workflow's lo, so the commit     *)
(* follows every version it read.  The values are not cached (section 4.7). *)
Commit(t) ==
    /\ phase[t] = "joined"
    /\ LET ts == Max(clock, Lo(Joined(t))) + 1
       IN  /\ store' = [k \in Keys |-> IF k \in WritesOf[t] THEN store[k] \cup {[ts |-> ts, val |-> t]} ELSE store[k]]
           /\ clock' = IF WritesOf[t] = {} THEN clock ELSE ts
    /\ phase' = [phase EXCEPT ![t] = "done"]
    /\ UNCHANGED <<cache, known, si, pc, rs>>

(* A push reaches worker w (section 4.3): the newest version of every key    *)
(* newer than w's entry, promised up to the stable time, which w learns.    *)
Push(w) ==
    /\ known[w] < clock
    /\ cache' = [cache EXCEPT ![w] = [k \in Keys |->
                   LET v == At(k, clock)
                   IN  IF v.ts > cache[w][k].t THEN [t |-> v.ts, p |-> clock, val |-> v.val]
                       ELSE cache[w][k]]]
    /\ known' = [known EXCEPT ![w] = clock]
    /\ UNCHANGED <<store, clock, si, pc, rs, phase>>

Terminated ==
    /\ \A t \in Txns : phase[t] \in {"done", "aborted"}
    /\ UNCHANGED vars

Next ==
    \/ \E t \in Txns, w \in Workers : \E b \in Branches(t) : Read(t, b, w)
    \/ \E t \in Txns : Join(t)
    \/ \E t \in Txns : Commit(t)
    \/ \E w \in Workers : Push(w)
    \/ Terminated

Spec == Init /\ [][Next]_vars

-----------------------------------------------------------------------------
(* Invariants.                                                               *)

\* "promises are kept" (section 4.2): no version of a key lies in (t, p] of
\* any entry a cache holds for it.
PromisesKept ==
    \A w \in Workers : \A k \in Keys :
        ~\E u \in store[k] : cache[w][k].t < u.ts /\ u.ts <= cache[w][k].p

\* "the interval lies inside every validity" (Observation 3): a branch's
\* interval, when not empty, lies inside [t, p] of every version it read, as
\* the store's versions say: each is its key's version at every point of it.
ReadsAtEveryPoint ==
    \A t \in Txns : \A b \in Branches(t) :
        Lo(si[t][b]) <= Hi(si[t][b]) =>
            \A r \in rs[t][b] : \A x \in {Lo(si[t][b]), Min(Hi(si[t][b]), clock)} : At(r.key, x).ts = r.ts

\* "transactions read one snapshot" (Argument 1, at the history level): every
\* committed workflow read, of each key, the version the store held at one
\* common timestamp.  It implies TCC: a snapshot of a store whose commits
\* follow what they read is causally consistent, and atomic.
TxnsReadOneSnapshot ==
    \A t \in Txns : phase[t] = "done" =>
        \E x \in 0..clock : \A r \in ReadSet(t) : At(r.key, x).ts = r.ts

\* Witnesses against vacuity.
NotTxnAborted == \A t \in Txns : phase[t] /= "aborted"
NotReadNewVersion == \A t \in Txns : phase[t] = "done" => \A r \in ReadSet(t) : r.ts = 0

=============================================================================
