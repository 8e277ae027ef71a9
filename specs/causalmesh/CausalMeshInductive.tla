------------------------- MODULE CausalMeshInductive -------------------------
(***************************************************************************)
(* An inductive invariant for CausalMesh's core safety property: the      *)
(* C-cache is a causal cut (CCacheIsCausalCut) and a revealed write is    *)
(* everywhere (CoverageLemma), with reads covering their dependencies     *)
(* (ReadsCoverDeps) and, from those, causally consistent reads in the     *)
(* history (ReadsAreCausallyConsistent).                                  *)
(*                                                                         *)
(* IndInv strengthens those invariants with what a proof by induction     *)
(* needs: what each server holds of each write (in its I-cache, merged    *)
(* into its C-cache, or nothing), that merged sets are closed under       *)
(* dependencies, that a revealed write is held by every server, that an   *)
(* in-flight write is held by its head, what each client and each write   *)
(* has seen, and how clocks, the GVC, the C-cache entries, the chain      *)
(* messages and the clients' state follow from the writes.                *)
(*                                                                         *)
(* TLC checks, over every state of a bounded type-correct space that      *)
(* satisfies IndInv (IndInit), that every step of Next keeps IndInv       *)
(* (MC_inductive_step.cfg) and that IndInv implies the invariants it      *)
(* strengthens and the history property (MC_inductive_lemma.cfg);        *)
(* MC_inductive_reachable.cfg checks Init => IndInv and IndInv on every   *)
(* reachable state at the spec's CI bounds.                               *)
(*                                                                         *)
(* Scope: the default protocol (exact integration, conflict resolution by *)
(* the winner's clock, writes stamped above their deps, asynchronous      *)
(* flushes, no dissemination) on two servers with the paper's one-round   *)
(* chain.  With two servers every chain is head -> tail, so an in-flight  *)
(* write is on its head's outgoing link, in round 1; a longer ring would  *)
(* need a conjunct saying which hops an in-flight write has passed.       *)
(*                                                                         *)
(* Writes are identified by their clocks (ClocksUnique), which is what    *)
(* exact integration relies on: a dependency <<k, v>> names the one write *)
(* of k whose clock is v.                                                 *)
(***************************************************************************)
EXTENDS CausalMesh

CONSTANTS
    MaxClock,   \* the bounded space: every clock entry is in 0..MaxClock
    Omit        \* names of IndInv conjuncts to leave out (tests: {} or one name)

ASSUME N = 2 /\ Chain = "one_round" /\ Integration = "exact"
ASSUME WriteClock = "join" /\ Resolution = "winner" /\ TxnAbort = "lex"
ASSUME ~Disseminate /\ DbFlush = "async"
ASSUME MaxClock \in Nat

\* The conjuncts a test may leave out, to show the check fails without them.
Droppable == {"DepsPresent", "MergedIsClosed", "RevealedIsEverywhere",
              "InFlightHeldByHead", "ClientDepsRevealed", "ReadsCoverDeps",
              "ClientPastCovered", "WritePastCovered", "ReadsReturnLatest"}
ASSUME Omit \subseteq Droppable
Keep(name) == name \notin Omit

Clocks == [Servers -> 0..MaxClock]

-----------------------------------------------------------------------------
(* Writes and where they are.                                              *)

WriteIds == {o \in OpIds : IsWriteOp(o)}
WriteOf(o) == Op(o).w
\* The client's writes before its operation o (what o's message carries).
OwnEarlier(o) == {WriteOf(p) : p \in {q \in WriteIds : q[1] = o[1] /\ q[2] < o[2]}}
\* The versions of key k the history's writes made.
ClocksOf(k) == {x.vc : x \in {y \in AllWrites : y.key = k}}

MergedAt(s, x) == x.vc \in mg[s][x.key]
Held(s, x) == (\E e \in ic[s][x.key] : e.vc = x.vc) \/ MergedAt(s, x)
Revealed(x) == \E s \in Servers : MergedAt(s, x)
Msgs(s) == {chan[s][i] : i \in 1..Len(chan[s])}
InFlight(x) == \E s \in Servers : \E m \in Msgs(s) : m.w = x

\* What a C-cache entry shows when the writes of k with clocks M are merged into
\* it: the winner (the lexicographically largest clock) and the join of all.
ShownOf(k, M) ==
    LET top == LexMax(M \cup {Zero})
    IN  [val |-> IF top = Zero THEN InitVal
                 ELSE (CHOOSE x \in AllWrites : x.key = k /\ x.vc = top).val,
         vc  |-> JoinAll(M),
         win |-> top]

\* The joins of sets of versions of k: what a read can have been shown.
ReadVcs(k) == {JoinAll(M) : M \in SUBSET ClocksOf(k)}

-----------------------------------------------------------------------------
(* The conjuncts of IndInv.                                                *)

\* Nothing waits for the database or for dissemination (asynchronous
\* flushes, dissemination off).
NothingPending == dis = {} /\ \A s \in Servers : fl[s] = <<>>

\* Each history entry is what its action appends: a write names itself; only a
\* client's last operation can be an aborted read transaction; a read returned a
\* write of its key (or the initial value), was shown a join of versions of the
\* key, and recorded as deps versions the client still depends on.
OpsWellFormed ==
    \A c \in Clients : \A i \in 1..Len(hist[c]) :
        LET op == hist[c][i]
        IN  /\ op.op \in {"r", "w", "rt"}
            /\ op.op = "w" => /\ op.ok
                              /\ op.keys = {op.w.key}
                              /\ op.w.val = <<c, i>>
            /\ op.op = "r" => op.ok /\ Cardinality(op.keys) = 1
            /\ op.op = "rt" => op.keys \in TxnKeySets
            /\ ~op.ok => i = Len(hist[c])
            /\ (op.op \in {"r", "rt"} /\ op.ok) =>
                  \A k \in op.keys :
                     /\ op.val[k] = InitVal \/ (op.val[k] \in WriteIds /\ WriteOf(op.val[k]).key = k)
                     /\ op.vc[k] \in ReadVcs(k)
                     /\ op.dep[k] \subseteq DepsOn(c, k)

\* Distinct writes have distinct clocks, none of them zero.
ClocksUnique ==
    \A x, y \in AllWrites : (x.vc = y.vc => x = y) /\ x.vc /= Zero

\* A server's own GVC entry counts its writes (the largest own entry of any
\* write's clock); its other entries stay below what they count.
GvcCounts ==
    \A s \in Servers :
        /\ gvc[s][s] = MaxNat({x.vc[s] : x \in AllWrites} \cup {0})
        /\ \A t \in Servers : gvc[s][t] <= gvc[t][t]

\* local is the client's writes.
LocalIsOwnWrites ==
    \A c \in Clients : local[c] = {WriteOf(o) : o \in {p \in WriteIds : p[1] = c}}

\* A client depends only on versions of writes in the history.
ClientDepsNameWrites ==
    \A c \in Clients : deps[c] \subseteq {DepOn(x) : x \in AllWrites}

\* A write depends on all the writer's earlier writes (carried) and otherwise
\* only on versions its client still depends on; its clock is above each.
WriteDepsWellFormed ==
    \A o \in WriteIds :
        LET y   == WriteOf(o)
            own == {DepOn(x) : x \in OwnEarlier(o)}
        IN  /\ own \subseteq y.deps
            /\ y.deps \subseteq own \cup deps[o[1]]
            /\ \A d \in y.deps : Leq(d[2], y.vc) /\ d[2] /= y.vc

\* The caches hold writes of the history; a write is in the I-cache or merged,
\* not both; a C-cache entry is what its merged writes make it.
CachesHoldWrites ==
    \A s \in Servers : \A k \in Keys :
        /\ ic[s][k] \subseteq AllWrites
        /\ mg[s][k] \subseteq ClocksOf(k)
        /\ \A e \in ic[s][k] : e.vc \notin mg[s][k]
        /\ cc[s][k] = ShownOf(k, mg[s][k])

\* A chain message is a write of the history on its head's link, in round 1,
\* carrying the writer's earlier writes; a link keeps its head's order; each
\* write is sent once.
ChainMessages ==
    /\ \A s \in Servers : \A m \in Msgs(s) :
          \E o \in WriteIds :
             m = [w |-> WriteOf(o), head |-> s, round |-> 1, carried |-> OwnEarlier(o)]
    /\ \A s, t \in Servers : \A i \in 1..Len(chan[s]) : \A j \in 1..Len(chan[t]) :
          chan[s][i].w = chan[t][j].w => s = t /\ i = j
    /\ \A s \in Servers : \A i \in 1..(Len(chan[s]) - 1) :
          chan[s][i].w.vc[s] < chan[s][i + 1].w.vc[s]

\* A write no longer in flight was revealed by its tail.
DeliveredWritesRevealed ==
    \A x \in AllWrites : InFlight(x) \/ Revealed(x)

\* The core.  A server holding a write holds what it depends on ...
DepsPresent == Keep("DepsPresent") =>
    \A s \in Servers : \A x, y \in AllWrites :
        Held(s, x) /\ DepOn(y) \in x.deps => Held(s, y)

\* ... and has merged it when it merged the write (so the C-cache is a cut) ...
MergedIsClosed == Keep("MergedIsClosed") =>
    \A s \in Servers : \A x, y \in AllWrites :
        MergedAt(s, x) /\ DepOn(y) \in x.deps => MergedAt(s, y)

\* ... a write merged anywhere is held everywhere (Lemma 1) ...
RevealedIsEverywhere == Keep("RevealedIsEverywhere") =>
    \A x \in AllWrites : Revealed(x) => \A s \in Servers : Held(s, x)

\* ... a write in flight is held by its head ...
InFlightHeldByHead == Keep("InFlightHeldByHead") =>
    \A s \in Servers : \A m \in Msgs(s) : Held(s, m.w)

\* ... and a client depends only on revealed writes.
ClientDepsRevealed == Keep("ClientDepsRevealed") =>
    \A c \in Clients : \A x \in AllWrites : DepOn(x) \in deps[c] => Revealed(x)

ReadsCoverDepsKept == Keep("ReadsCoverDeps") => ReadsCoverDeps

(* The history.  What a client has seen (the causal past of its next          *)
(* operation) is what its deps and own writes name, and what a write's client *)
(* had seen is what the write depends on; so a read, which integrates the     *)
(* client's deps and merges in its own writes, returns the newest version of  *)
(* its key, in the order of conflict resolution, of those in its past.  These  *)
(* give the history property (causal consistency of the reads).               *)

\* The writes the dependencies D name, and those they depend on, transitively.
RECURSIVE DepClosure(_)
DepClosure(D) ==
    LET X  == {x \in AllWrites : DepOn(x) \in D}
        D2 == D \cup UNION {x.deps : x \in X}
    IN  IF D2 = D THEN X ELSE DepClosure(D2)

PastWrites(P) == {Op(p).w : p \in {q \in P : IsWriteOp(q)}}

\* The causal past of a client's next operation: its operations and their pasts.
ClientPast(c) == Grow({<<c, i>> : i \in 1..Len(hist[c])})

ClientPastCovered == Keep("ClientPastCovered") =>
    \A c \in Clients : PastWrites(ClientPast(c)) \subseteq local[c] \cup DepClosure(deps[c])

WritePastCovered == Keep("WritePastCovered") =>
    \A o \in WriteIds : PastWrites(CausalPast(o)) \subseteq DepClosure(WriteOf(o).deps)

\* Every other write of the key in a read's past loses to the version returned.
ReadsReturnLatest == Keep("ReadsReturnLatest") =>
    \A o \in OpIds : IsReadOp(o) => \A k \in Op(o).keys :
        LET v == Op(o).val[k]
        IN  \A p \in {q \in CausalPast(o) : IsWriteOp(q) /\ Op(q).w.key = k} :
               p = v \/ (v /= InitVal /\ LexLess(Op(p).w.vc, WriteOf(v).vc))

IndInv ==
    /\ NothingPending
    /\ OpsWellFormed
    /\ ClocksUnique
    /\ GvcCounts
    /\ LocalIsOwnWrites
    /\ ClientDepsNameWrites
    /\ WriteDepsWellFormed
    /\ CachesHoldWrites
    /\ ChainMessages
    /\ DeliveredWritesRevealed
    /\ DepsPresent
    /\ MergedIsClosed
    /\ RevealedIsEverywhere
    /\ InFlightHeldByHead
    /\ ClientDepsRevealed
    /\ ReadsCoverDepsKept
    /\ ClientPastCovered
    /\ WritePastCovered
    /\ ReadsReturnLatest

-----------------------------------------------------------------------------
(* The bounded space.  BoundedTypeOK is TypeOK with every clock entry in   *)
(* 0..MaxClock; with the constants (clients, MaxOps, keys) it makes the    *)
(* space finite.                                                            *)

BoundedTypeOK ==
    /\ TypeOK
    /\ gvc \in [Servers -> Clocks]
    /\ \A x \in AllWrites : x.vc \in Clocks

(* IndInit is BoundedTypeOK /\ IndInv, written so that TLC can enumerate it:  *)
(* it builds the state from choices (each client's operation kinds, each      *)
(* write's clock and extra dependencies, what each server holds of each       *)
(* write, which writes are in flight, the clients' deps, the GVCs, what each  *)
(* read returned), each drawn from exactly the values the conjuncts above     *)
(* allow, so that every state of BoundedTypeOK /\ IndInv is built (the        *)
(* argument is per conjunct, next to each choice); the history's conjuncts    *)
(* then filter the state built.  That nothing else is built is checked by     *)
(* TLC: the configs list every conjunct as an invariant, which TLC checks on  *)
(* initial states too.  Conjuncts in Omit are not imposed either.             *)

\* A client's history, as kinds of operations: a write or read of a key, a
\* committed or aborted read transaction (only last: OpsWellFormed).
Kinds == {<<"w", k>> : k \in Keys} \cup {<<"r", {k}>> : k \in Keys}
         \cup {<<"rt", ks>> : ks \in TxnKeySets} \cup {<<"abort", ks>> : ks \in TxnKeySets}
Shapes == {sh \in UNION {[1..n -> Kinds] : n \in 0..MaxOps} :
              \A i \in DOMAIN sh : sh[i][1] = "abort" => i = Len(sh)}

\* A write's status at a server: nothing, in the I-cache, merged.
Status == {"none", "ic", "mg"}

\* The functions f with DOMAIN f = DOMAIN F and f[x] \in F[x] for each x.
RECURSIVE Choices(_)
Choices(F) ==
    IF DOMAIN F = {} THEN {[x \in {} |-> 0]}
    ELSE LET x == CHOOSE y \in DOMAIN F : TRUE
             R == Choices([y \in DOMAIN F \ {x} |-> F[y]])
         IN  {[y \in DOMAIN F |-> IF y = x THEN v ELSE r[y]] : v \in F[x], r \in R}

\* Where a delivered write is: on no link (servers are 0..N-1).
Done == N

\* Sort the ids S of writes in flight at s by their clocks' entry s (distinct).
RECURSIVE SortBy(_, _, _)
SortBy(S, vcOf, s) ==
    IF S = {} THEN <<>>
    ELSE LET m == CHOOSE x \in S : \A y \in S : vcOf[x][s] <= vcOf[y][s]
         IN  <<m>> \o SortBy(S \ {m}, vcOf, s)

IndInit ==
  /\ dis = {}
  /\ fl = [s \in Servers |-> <<>>]
  /\ \E shape \in [Clients -> Shapes] :
     LET Ops      == UNION {{<<c, i>> : i \in DOMAIN shape[c]} : c \in Clients}
         Kind(o)  == shape[o[1]][o[2]]
         WIds     == {o \in Ops : Kind(o)[1] = "w"}
         RIds     == {o \in Ops : Kind(o)[1] \in {"r", "rt"}}
         KeyOf(o) == Kind(o)[2]
         Earlier(o) == {p \in WIds : p[1] = o[1] /\ p[2] < o[2]}
         Below(a, b) == Leq(a, b) /\ a /= b
     IN
     \* ClocksUnique, and WriteDepsWellFormed for a client's own earlier writes.
     \E vcOf \in [WIds -> Clocks \ {Zero}] :
     /\ \A o, p \in WIds : o /= p => vcOf[o] /= vcOf[p]
     /\ \A o \in WIds : \A p \in Earlier(o) : Below(vcOf[p], vcOf[o])
     \* WriteDepsWellFormed: the other dependencies of a write are versions of
     \* other clients' writes below its clock (a client's own later writes are
     \* above it, its earlier ones are already deps).
     /\ \E extra \in [WIds -> SUBSET WIds] :
        /\ \A o \in WIds : \A p \in extra[o] : p[1] /= o[1] /\ Below(vcOf[p], vcOf[o])
        /\ LET Dep(p)  == <<KeyOf(p), vcOf[p]>>
               Rec(o)  == [key |-> KeyOf(o), val |-> o, vc |-> vcOf[o],
                           deps |-> {Dep(p) : p \in Earlier(o) \cup extra[o]}]
               DepIds(o) == Earlier(o) \cup extra[o]
           IN
           \* CachesHoldWrites: what each server holds of each write; RevealedIsEverywhere,
           \* DepsPresent and MergedIsClosed restrict it.
           \E st \in [Servers -> [WIds -> Status]] :
           LET Rev(o) == \E s \in Servers : st[s][o] = "mg"
           IN
           /\ Keep("RevealedIsEverywhere") =>
                 \A o \in WIds : Rev(o) => \A s \in Servers : st[s][o] /= "none"
           /\ Keep("DepsPresent") =>
                 \A s \in Servers : \A o \in WIds : st[s][o] /= "none" =>
                    \A p \in DepIds(o) : st[s][p] /= "none"
           /\ Keep("MergedIsClosed") =>
                 \A s \in Servers : \A o \in WIds : st[s][o] = "mg" =>
                    \A p \in DepIds(o) : st[s][p] = "mg"
           \* ChainMessages: where each write is (in flight on a link, or delivered);
           \* DeliveredWritesRevealed, InFlightHeldByHead; one link's writes have distinct
           \* own entries (the link's order).
           /\ \E at \in [WIds -> Servers \cup {Done}] :
              /\ \A o \in WIds : at[o] = Done => Rev(o)
              /\ Keep("InFlightHeldByHead") =>
                    \A o \in WIds : at[o] /= Done => st[at[o]][o] /= "none"
              /\ \A o, p \in WIds : o /= p /\ at[o] = at[p] /\ at[o] /= Done =>
                    vcOf[o][at[o]] /= vcOf[p][at[p]]
              \* ClientDepsNameWrites, ClientDepsRevealed, and WriteDepsWellFormed (a
              \* write's other deps are deps of its client).
              /\ \E dc \in [Clients -> SUBSET WIds] :
                 /\ Keep("ClientDepsRevealed") => \A c \in Clients : \A o \in dc[c] : Rev(o)
                 /\ \A o \in WIds : extra[o] \subseteq dc[o[1]]
                 \* GvcCounts.
                 /\ \E g \in [Servers -> Clocks] :
                    /\ \A s \in Servers :
                         /\ g[s][s] = MaxNat({vcOf[o][s] : o \in WIds} \cup {0})
                         /\ \A t \in Servers : g[s][t] <= MaxNat({vcOf[o][t] : o \in WIds} \cup {0})
                    \* OpsWellFormed and ReadsCoverDeps: what each read returned.
                    /\ LET Vers(k) == {vcOf[o] : o \in {p \in WIds : KeyOf(p) = k}}
                           Vals(k) == {InitVal} \cup {o \in WIds : KeyOf(o) = k}
                           DepsOf(c, k) == {vcOf[p] : p \in {q \in dc[c] : KeyOf(q) = k}}
                           Payloads(c, ks) ==
                              {r \in [val : Choices([k \in ks |-> Vals(k)]),
                                      vc  : Choices([k \in ks |-> {JoinAll(M) : M \in SUBSET Vers(k)}]),
                                      dep : Choices([k \in ks |-> SUBSET DepsOf(c, k)])] :
                                 Keep("ReadsCoverDeps") =>
                                    \A k \in ks : \A d \in r.dep[k] : Leq(d, r.vc[k])}
                       IN
                       \E pay \in Choices([o \in RIds |-> Payloads(o[1], KeyOf(o))]) :
                       /\ hist = [c \in Clients |-> [i \in DOMAIN shape[c] |->
                             LET o == <<c, i>> IN
                             CASE Kind(o)[1] = "w" ->
                                    [op |-> "w", ok |-> TRUE, keys |-> {KeyOf(o)}, w |-> Rec(o)]
                               [] Kind(o)[1] = "abort" ->
                                    [op |-> "rt", ok |-> FALSE, keys |-> KeyOf(o)]
                               [] OTHER ->
                                    [op |-> Kind(o)[1], ok |-> TRUE, keys |-> KeyOf(o),
                                     val |-> pay[o].val, vc |-> pay[o].vc, dep |-> pay[o].dep]]]
                       /\ ic = [s \in Servers |-> [k \in Keys |->
                                 {Rec(o) : o \in {p \in WIds : KeyOf(p) = k /\ st[s][p] = "ic"}}]]
                       /\ mg = [s \in Servers |-> [k \in Keys |->
                                 {vcOf[o] : o \in {p \in WIds : KeyOf(p) = k /\ st[s][p] = "mg"}}]]
                       /\ cc = [s \in Servers |-> [k \in Keys |-> ShownOf(k, mg[s][k])]]
                       /\ chan = [s \in Servers |->
                                   LET ids == SortBy({o \in WIds : at[o] = s}, vcOf, s)
                                   IN  [i \in 1..Len(ids) |->
                                          [w |-> Rec(ids[i]), head |-> s, round |-> 1,
                                           carried |-> {Rec(p) : p \in Earlier(ids[i])}]]]
                       /\ deps = [c \in Clients |-> {Dep(o) : o \in dc[c]}]
                       /\ local = [c \in Clients |-> {Rec(o) : o \in {p \in WIds : p[1] = c}}]
                       /\ gvc = g
  \* The history's conjuncts, on the state built.
  /\ ClientPastCovered
  /\ WritePastCovered
  /\ ReadsReturnLatest

\* The lemma configs check invariants on IndInit's states and take no step.
NoStep == UNCHANGED vars

\* The successors TLC explores further: none outside the bounded space (they are
\* checked, not expanded); inside it, a successor satisfying IndInv is an initial
\* state already, so the search is one step deep.
InBounds == BoundedTypeOK

=============================================================================
