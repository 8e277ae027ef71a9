------------------------------ MODULE CausalMesh ------------------------------
(***************************************************************************)
(* CausalMesh (Zhang, Angel, Mu, Liu; VLDB'25): a causally consistent     *)
(* cache for stateful serverless workflows whose clients roam between     *)
(* cache servers.                                                          *)
(*                                                                         *)
(* Written from the paper (sections 3-6), independently of the authors'   *)
(* mesh.tla and of causim's Rust model.  See README.md next to this file  *)
(* for the mapping to the paper, the modelling choices and the mutants.   *)
(*                                                                         *)
(* Each cache server holds                                                 *)
(*   - a C-cache  (consistent cache, section 4): Key -> (value, VC), read *)
(*     by clients and always meant to be a strict causal cut;             *)
(*   - an I-cache (inconsistent cache, section 4): Key -> set of writes   *)
(*     (value, VC, deps) the server is not yet sure every server holds;   *)
(*   - a global vector clock GVC (section 5.2).                           *)
(* Servers 0..N-1 form N interleaved propagation chains (section 5.2,     *)
(* Fig. 5): server h heads the chain h -> h+1 -> ... -> h-1, whose tail   *)
(* h-1 reveals the write (integrates it into its C-cache).  Links are     *)
(* FIFO, unbounded and lossless; one FIFO link per ring edge s -> s+1     *)
(* carries the messages of all chains.                                     *)
(*                                                                         *)
(* Clients (workflows) carry `deps` (Key -> VC, the versions they read)   *)
(* and `local` (their own writes, with deps) from function to function    *)
(* (section 6, Fig. 10); every operation picks its server freely, which   *)
(* is how roaming is modelled.                                             *)
(***************************************************************************)
EXTENDS Naturals, Sequences, FiniteSets, TLC

CONSTANTS
    N,        \* number of cache servers; the servers are 0..N-1
    Keys,     \* keys (model values)
    Clients,  \* clients, i.e. workflows (model values)
    MaxOps,   \* operations each client performs
    InitVal,  \* model value: what every key holds before any write
    Mutant,   \* which protocol variant: "none" is the paper's protocol
    Chain     \* "one_round" (paper, Fig. 7) or "two_round" (authors' later fix)

Mutants == {"none", "no_carry_local_writes", "reveal_at_head",
            "nearest_deps_only", "read_without_integration"}

ASSUME N \in Nat /\ N >= 2
ASSUME MaxOps \in Nat
ASSUME Mutant \in Mutants
ASSUME Chain \in {"one_round", "two_round"}

VARIABLES
    cc,      \* cc[s][k]    : C-cache entry [val, vc]
    ic,      \* ic[s][k]    : I-cache, a set of writes [key, val, vc, deps]
    gvc,     \* gvc[s]      : server s's global vector clock
    chan,    \* chan[s]     : FIFO link s -> Succ(s), a sequence of chain messages
    deps,    \* deps[c][k]  : the client's dependency on key k (a VC; Zero = none)
    local,   \* local[c]    : the client's own writes, at most one (the latest) per key
    hist     \* hist[c]     : the client's completed operations, in session order

serverVars == <<cc, ic, gvc, chan>>
clientVars == <<deps, local, hist>>
vars == <<cc, ic, gvc, chan, deps, local, hist>>

Servers == 0..(N - 1)
Succ(s) == (s + 1) % N
Pred(s) == (s + N - 1) % N
\* s is the tail of the chain whose head is h (the last hop before h again).
IsTail(s, h) == Succ(s) = h
\* The key sets a read transaction may ask for.
TxnKeySets == {ks \in SUBSET Keys : Cardinality(ks) >= 2}

-----------------------------------------------------------------------------
(* Vector clocks (section 3.2).                                            *)

Zero == [i \in Servers |-> 0]
Leq(a, b) == \A i \in Servers : a[i] <= b[i]
Join(a, b) == [i \in Servers |-> IF a[i] >= b[i] THEN a[i] ELSE b[i]]
MaxNat(S) == CHOOSE m \in S : \A x \in S : x <= m
JoinAll(S) == [i \in Servers |-> MaxNat({v[i] : v \in S} \cup {0})]
\* Lexicographic order: the deterministic tie-break between concurrent versions.
LexLess(a, b) ==
    \E i \in Servers : a[i] < b[i] /\ \A j \in Servers : j < i => a[j] = b[j]

\* Dependencies: a total map Key -> VC, where Zero means "no dependency".
NoDeps == [k \in Keys |-> Zero]
DepsJoin(d, e) == [k \in Keys |-> Join(d[k], e[k])]
\* The dependency map naming exactly the versions of a set of writes.
DepsOf(W) == [k \in Keys |-> JoinAll({w.vc : w \in {x \in W : x.key = k}})]

-----------------------------------------------------------------------------
(* The C-cache merge (section 3.2): a newer version replaces an older one; *)
(* two concurrent versions merge their clocks and keep the value of the    *)
(* lexicographically larger clock.                                         *)

MergeOne(cur, w) ==
    IF Leq(w.vc, cur.vc) THEN cur
    ELSE IF Leq(cur.vc, w.vc) THEN [val |-> w.val, vc |-> w.vc]
    ELSE [val |-> IF LexLess(cur.vc, w.vc) THEN w.val ELSE cur.val,
          vc  |-> Join(cur.vc, w.vc)]

\* Merge a set of writes in a fixed order (lexicographically smallest clock
\* first), so the result does not depend on how TLC enumerates the set.
RECURSIVE MergeAll(_, _)
MergeAll(cur, W) ==
    IF W = {} THEN cur
    ELSE LET w == CHOOSE x \in W : \A y \in W \ {x} : LexLess(x.vc, y.vc)
         IN  MergeAll(MergeOne(cur, w), W \ {w})

-----------------------------------------------------------------------------
(* Dependency integration (section 4, Fig. 3).                             *)

Entries(icS) == UNION {icS[k] : k \in Keys}
\* The I-cache writes that a dependency map names: a dependency (k, v) stands
\* for every version of k up to v.
Named(E, d) == {e \in E : Leq(e.vc, d[e.key])}

\* Fig. 3 line 3: the transitive predecessors of d (inclusive), found by
\* following the deps of every I-cache write that d names, to a fixpoint.
RECURSIVE Closure(_, _)
Closure(E, d) ==
    LET d2 == [k \in Keys |-> JoinAll({d[k]} \cup {e.deps[k] : e \in Named(E, d)})]
    IN  IF d2 = d THEN d ELSE Closure(E, d2)

\* Integrate the dependency map d into one server's dual cache.
\* Returns the server's new C-cache, I-cache and GVC.
IntegrateAt(ccS, icS, gvcS, d) ==
    LET reach  == IF Mutant = "nearest_deps_only"
                  THEN d                              \* no recursion into deps of deps
                  ELSE Closure(Entries(icS), d)
        pulled == Named(Entries(icS), reach)          \* Fig. 3 lines 5-8: leave the I-cache
    IN  [cc  |-> [k \in Keys |-> MergeAll(ccS[k], {e \in pulled : e.key = k})],  \* lines 9-11
         ic  |-> [k \in Keys |-> icS[k] \ pulled],
         gvc |-> Join(gvcS, JoinAll({reach[k] : k \in Keys}))]                  \* line 8

\* Has the server already got this version (Fig. 7 lines 10 and 29)?
SeenAt(ccS, icS, w) == w \in icS[w.key] \/ Leq(w.vc, ccS[w.key].vc)

\* Add to an I-cache the writes of W the server has not seen (Fig. 7 lines 9-11
\* and 29-30).
AddUnseen(ccS, icS, W) ==
    [k \in Keys |-> icS[k] \cup {l \in W : l.key = k /\ ~SeenAt(ccS, icS, l)}]

\* The tail's step (Fig. 7 lines 22-27): integrate the write's dependencies,
\* then merge the write itself into the C-cache (dropping any I-cache copy).
RevealAt(ccS, icS, gvcS, w) ==
    LET R == IntegrateAt(ccS, icS, gvcS, w.deps)
    IN  [cc  |-> [R.cc EXCEPT ![w.key] = MergeOne(@, w)],
         ic  |-> [R.ic EXCEPT ![w.key] = @ \ {w}],
         gvc |-> Join(R.gvc, w.vc)]

-----------------------------------------------------------------------------

TypeOK ==
    /\ gvc \in [Servers -> [Servers -> Nat]]
    /\ \A s \in Servers : DOMAIN cc[s] = Keys /\ DOMAIN ic[s] = Keys
    /\ \A s \in Servers, k \in Keys :
          /\ cc[s][k].vc \in [Servers -> Nat]
          /\ \A w \in ic[s][k] : w.key = k
    /\ \A s \in Servers : \A i \in 1..Len(chan[s]) :
          chan[s][i].head \in Servers /\ chan[s][i].round \in {1, 2}
    /\ deps \in [Clients -> [Keys -> [Servers -> Nat]]]
    /\ \A c \in Clients : \A k \in Keys : Cardinality({w \in local[c] : w.key = k}) <= 1
    /\ \A c \in Clients : Len(hist[c]) <= MaxOps

Init ==
    /\ cc    = [s \in Servers |-> [k \in Keys |-> [val |-> InitVal, vc |-> Zero]]]
    /\ ic    = [s \in Servers |-> [k \in Keys |-> {}]]
    /\ gvc   = [s \in Servers |-> Zero]
    /\ chan  = [s \in Servers |-> <<>>]
    /\ deps  = [c \in Clients |-> NoDeps]
    /\ local = [c \in Clients |-> {}]
    /\ hist  = [c \in Clients |-> <<>>]

\* The client's request and the server's handler run as one atomic step, and so
\* does the client library's processing of the reply: the client blocks on the
\* RPC and nothing else can observe the reply in flight.

(* Read (section 5.3, Fig. 7 lines 2-4; client side Fig. 10 lines 2-8). *)
ClientRead(c, s) ==
    /\ Len(hist[c]) < MaxOps
    /\ LET R == IF Mutant = "read_without_integration"
                THEN [cc |-> cc[s], ic |-> ic[s], gvc |-> gvc[s]]
                ELSE IntegrateAt(cc[s], ic[s], gvc[s], deps[c])
       IN  \E k \in Keys :
           LET got  == R.cc[k]                         \* (value, vc) from the C-cache
               mine == {w \in local[c] : w.key = k}
               \* Fig. 10 line 6: merge the cached version with the client's own write.
               ret  == IF mine = {} THEN got ELSE MergeOne(got, CHOOSE w \in mine : TRUE)
           IN  /\ cc'   = [cc  EXCEPT ![s] = R.cc]
               /\ ic'   = [ic  EXCEPT ![s] = R.ic]
               /\ gvc'  = [gvc EXCEPT ![s] = R.gvc]
               /\ deps' = [deps EXCEPT ![c][k] = Join(@, got.vc)]   \* Fig. 10 line 4
               /\ hist' = [hist EXCEPT ![c] = Append(@,
                            [op |-> "r", ok |-> TRUE, keys |-> {k},
                             val |-> [x \in {k} |-> ret.val],
                             vc  |-> [x \in {k} |-> got.vc],
                             dep |-> [x \in {k} |-> deps[c][k]]])]
    /\ UNCHANGED <<chan, local>>

(* Write at the head of the server's own chain (section 5.2, Fig. 7 lines   *)
(* 7-19; client side Fig. 10 lines 10-13).  The client piggybacks its own   *)
(* writes (`local`, Fig. 6); the server adds the ones it has not seen to    *)
(* its I-cache and makes them dependencies of the new write.                *)
ClientWrite(c, s, k) ==
    /\ Len(hist[c]) < MaxOps
    /\ LET i       == Len(hist[c]) + 1
           carried == IF Mutant = "no_carry_local_writes" THEN {} ELSE local[c]
           wdeps   == DepsJoin(deps[c], DepsOf(carried))           \* line 12
           \* The new version: the GVC, raised to cover the write's dependencies,
           \* with the server's own entry incremented (line 8).
           base    == JoinAll({gvc[s]} \cup {wdeps[x] : x \in Keys})
           vc      == [base EXCEPT ![s] = @ + 1]
           w       == [key |-> k, val |-> <<c, i>>, vc |-> vc, deps |-> wdeps]
           icS     == [AddUnseen(cc[s], ic[s], carried)              \* lines 9-11
                         EXCEPT ![k] = @ \cup {w}]
           \* One-round chain: the message carries the client's writes along the
           \* chain (Fig. 7 lines 29-30 read `local` in ServerWrite).
           msg     == [w |-> w, head |-> s, round |-> 1,
                       carried |-> IF Chain = "one_round" THEN carried ELSE {}]
           \* Mutant reveal_at_head: the head reveals the write at once.
           H       == IF Mutant = "reveal_at_head"
                      THEN RevealAt(cc[s], icS, vc, w)
                      ELSE [cc |-> cc[s], ic |-> icS, gvc |-> vc]
       IN  /\ cc'    = [cc  EXCEPT ![s] = H.cc]
           /\ ic'    = [ic  EXCEPT ![s] = H.ic]
           /\ gvc'   = [gvc EXCEPT ![s] = H.gvc]
           /\ chan'  = [chan EXCEPT ![s] = Append(@, msg)]
           /\ local' = [local EXCEPT ![c] = {l \in @ : l.key /= k} \cup {w}]
           /\ hist'  = [hist EXCEPT ![c] = Append(@,
                         [op |-> "w", ok |-> TRUE, keys |-> {k}, w |-> w])]
    /\ UNCHANGED deps

(* Read transaction (section 5.4, Fig. 8): the server integrates the deps    *)
(* and answers every key from its C-cache; the client library aborts if one  *)
(* of its own writes is newer than the version returned for that key.        *)
ClientReadTxn(c, s) ==
    /\ Len(hist[c]) < MaxOps
    /\ LET R == IntegrateAt(cc[s], ic[s], gvc[s], deps[c])
       IN  \E ks \in TxnKeySets :
           LET abort == \E l \in local[c] : l.key \in ks /\ ~Leq(l.vc, R.cc[l.key].vc)
           IN  /\ cc'   = [cc  EXCEPT ![s] = R.cc]
               /\ ic'   = [ic  EXCEPT ![s] = R.ic]
               /\ gvc'  = [gvc EXCEPT ![s] = R.gvc]
               /\ IF abort
                  THEN /\ hist' = [hist EXCEPT ![c] = Append(@,
                                    [op |-> "rt", ok |-> FALSE, keys |-> ks])]
                       /\ UNCHANGED deps
                  ELSE /\ deps' = [deps EXCEPT ![c] =
                                    [x \in Keys |-> IF x \in ks THEN Join(@[x], R.cc[x].vc)
                                                                ELSE @[x]]]
                       /\ hist' = [hist EXCEPT ![c] = Append(@,
                                    [op |-> "rt", ok |-> TRUE, keys |-> ks,
                                     val |-> [x \in ks |-> R.cc[x].val],
                                     vc  |-> [x \in ks |-> R.cc[x].vc],
                                     dep |-> [x \in ks |-> deps[c][x]]])]
    /\ UNCHANGED <<chan, local>>

(* ServerWrite (Fig. 4, Fig. 7 lines 21-33): server s takes the oldest      *)
(* message on the link from its predecessor.  Three cases, one action each. *)
InMsg(s) == Head(chan[Pred(s)])

\* An intermediate hop.  Round 1 stores the write (and, one-round chain, the
\* writes it carries) in the I-cache; round 2 (two-round chain) just passes it on.
Forward(s) ==
    /\ chan[Pred(s)] /= <<>>
    /\ LET m == InMsg(s)
       IN  /\ ~IsTail(s, m.head)
           /\ ic' = IF m.round = 1
                    THEN [ic EXCEPT ![s] = AddUnseen(cc[s], ic[s], m.carried \cup {m.w})]
                    ELSE ic
           /\ chan' = [chan EXCEPT ![Pred(s)] = Tail(@), ![s] = Append(@, m)]
    /\ UNCHANGED <<cc, gvc, clientVars>>

\* Two-round chain: the tail stores the write like any hop and sends it round
\* the ring once more (round 2).
TailForward(s) ==
    /\ Chain = "two_round"
    /\ chan[Pred(s)] /= <<>>
    /\ LET m == InMsg(s)
       IN  /\ IsTail(s, m.head)
           /\ m.round = 1
           /\ ic' = [ic EXCEPT ![s] = AddUnseen(cc[s], ic[s], {m.w})]
           /\ chan' = [chan EXCEPT ![Pred(s)] = Tail(@),
                                   ![s] = Append(@, [m EXCEPT !.round = 2])]
    /\ UNCHANGED <<cc, gvc, clientVars>>

\* The tail reveals the write: one-round chain on arrival (after storing the
\* writes the message carries), two-round chain on the second arrival.
TailIntegrate(s) ==
    /\ chan[Pred(s)] /= <<>>
    /\ LET m == InMsg(s)
           R == RevealAt(cc[s], AddUnseen(cc[s], ic[s], m.carried), gvc[s], m.w)
       IN  /\ IsTail(s, m.head)
           /\ Chain = "one_round" \/ m.round = 2
           /\ cc'   = [cc  EXCEPT ![s] = R.cc]
           /\ ic'   = [ic  EXCEPT ![s] = R.ic]
           /\ gvc'  = [gvc EXCEPT ![s] = R.gvc]
           /\ chan' = [chan EXCEPT ![Pred(s)] = Tail(@)]
    /\ UNCHANGED clientVars

\* Every client has finished and every link is empty: stutter, so that TLC's
\* deadlock check reports only genuine stalls.
Terminated ==
    /\ \A c \in Clients : Len(hist[c]) = MaxOps
    /\ \A s \in Servers : chan[s] = <<>>
    /\ UNCHANGED vars

Next ==
    \/ \E c \in Clients, s \in Servers : ClientRead(c, s)
    \/ \E c \in Clients, s \in Servers, k \in Keys : ClientWrite(c, s, k)
    \/ \E c \in Clients, s \in Servers : ClientReadTxn(c, s)
    \/ \E s \in Servers : Forward(s)
    \/ \E s \in Servers : TailForward(s)
    \/ \E s \in Servers : TailIntegrate(s)
    \/ Terminated

Spec == Init /\ [][Next]_vars

\* Clients and keys are interchangeable (nothing in the protocol orders them),
\* so configs may declare SYMMETRY Symmetry.  Servers are not: the ring and
\* the lexicographic tie-break order them.
Symmetry == Permutations(Clients) \cup Permutations(Keys)

-----------------------------------------------------------------------------
(* The history: what clients observed.                                      *)

OpIds == {<<c, i>> : c \in Clients, i \in 1..MaxOps}
IsOp(o) == o[2] \in 1..Len(hist[o[1]])
Op(o) == hist[o[1]][o[2]]
IsWriteOp(o) == IsOp(o) /\ Op(o).op = "w"
IsReadOp(o) == IsOp(o) /\ Op(o).op \in {"r", "rt"} /\ Op(o).ok
\* A write's value is the id <<client, index>> of the operation that wrote it,
\* so reads-from needs no lookup.
WriterOf(v) == v

AllWrites == {Op(o).w : o \in {x \in OpIds : IsWriteOp(x)}}

\* Direct causal predecessors of an operation: the client's earlier operations
\* (session order) and, for a read, the writes it read from (reads-from).
DirectPreds(o) ==
    {<<o[1], j>> : j \in 1..(o[2] - 1)}
    \cup (IF IsReadOp(o)
          THEN {WriterOf(Op(o).val[k]) : k \in {x \in Op(o).keys : Op(o).val[x] /= InitVal}}
          ELSE {})

RECURSIVE Grow(_)
Grow(S) == LET S2 == S \cup UNION {DirectPreds(p) : p \in S}
           IN  IF S2 = S THEN S ELSE Grow(S2)

\* The causal past of an operation: (session order \cup reads-from)+.
CausalPast(o) == Grow(DirectPreds(o))

-----------------------------------------------------------------------------
(* Invariants.  The English names are shared with the Stateright model.     *)

\* "the C-cache is a causal cut" (Definition 1, Lemma 3): every dependency of a
\* write in server s's C-cache is covered by s's C-cache.  A write is in the
\* C-cache when the C-cache's version of its key covers it and it is not still
\* waiting in the I-cache.  (Version order is wider than causal order: a
\* server's GVC absorbs every version it stamps or reveals, so a write can be
\* covered by a causally unrelated but newer-stamped version; such a write
\* stays in the I-cache until some integration names it.)
InCCache(s, x) == Leq(x.vc, cc[s][x.key].vc) /\ x \notin ic[s][x.key]

CCacheIsCausalCut ==
    \A s \in Servers : \A x \in AllWrites :
        InCCache(s, x) => \A k \in Keys : Leq(x.deps[k], cc[s][k].vc)

\* "a revealed write is everywhere" (Lemma 1, cut coverage across servers):
\* whatever one server's C-cache holds for key k, every server holds as well,
\* in its C-cache or in its I-cache.  (Stated with the other server's own
\* state only, not with the one it started from.)
CoverageLemma ==
    \A si, sj \in Servers : \A k \in Keys :
        Leq(cc[si][k].vc, JoinAll({cc[sj][k].vc} \cup {e.vc : e \in ic[sj][k]}))

\* "reads cover their dependencies" (Theorem 2): every read (and every key of a
\* committed read transaction) got from the server a version at least as new as
\* the client's dependency on that key.
ReadsCoverDeps ==
    \A c \in Clients : \A i \in 1..Len(hist[c]) :
        LET o == hist[c][i]
        IN  (o.op \in {"r", "rt"} /\ o.ok) => \A k \in o.keys : Leq(o.dep[k], o.vc[k])

\* "reads are causally consistent": no read returns a value (or the initial
\* value) of key k when its causal past holds a write to k that is newer than
\* the value returned, i.e. a write that has the returned write in its own
\* causal past.  A read transaction is one operation, so this also says that
\* its keys come from one causally consistent snapshot.
BadRead(o, k) ==
    LET v    == Op(o).val[k]
        past == CausalPast(o)
    IN  \E p \in past :
           /\ IsWriteOp(p)
           /\ Op(p).w.key = k
           /\ p /= WriterOf(v)
           /\ v = InitVal \/ WriterOf(v) \in CausalPast(p)

ReadsAreCausallyConsistent ==
    \A o \in OpIds : IsReadOp(o) => \A k \in Op(o).keys : ~BadRead(o, k)

-----------------------------------------------------------------------------
(* Witnesses against vacuity ("sometimes" properties).  Each Not... operator  *)
(* is checked as an invariant by a config that expects TLC to violate it:    *)
(* the counterexample shows the behaviour is reachable, so the invariants    *)
(* above are not passing because nothing happens.                            *)

\* "remote write becomes visible": some client read a value another client wrote.
RemoteWriteVisible ==
    \E o \in OpIds : IsReadOp(o) /\ \E k \in Op(o).keys :
        Op(o).val[k] /= InitVal /\ WriterOf(Op(o).val[k])[1] /= o[1]
NotRemoteWriteVisible == ~RemoteWriteVisible

\* "read transaction aborts" (Fig. 8 line 8).
TxnAborted == \E c \in Clients : \E i \in 1..Len(hist[c]) :
    hist[c][i].op = "rt" /\ ~hist[c][i].ok
NotTxnAborted == ~TxnAborted

=============================================================================
