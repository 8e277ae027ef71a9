------------------------------ MODULE CausalMesh ------------------------------
(***************************************************************************)
(* CausalMesh (Zhang, Angel, Mu, Liu; VLDB'25): a causally consistent     *)
(* cache for stateful serverless workflows whose clients roam between     *)
(* cache servers.                                                          *)
(*                                                                         *)
(* Written from the paper (sections 3-6).  Where the paper is ambiguous   *)
(* the spec takes the reading causim's Rust model takes (exact versions,  *)
(* section "Integration" below) and offers the authors' reading as a      *)
(* variant, so that TLC, Stateright (which runs the Rust code) and the    *)
(* history checker judge the same protocol.  README.md next to this file *)
(* maps every action to the paper and lists every choice.                 *)
(*                                                                         *)
(* Each cache server holds                                                 *)
(*   - a C-cache  (consistent cache, section 4): Key -> the visible       *)
(*     version [val, vc, win]: the value shown, the merged vector clock,  *)
(*     and the clock of the write whose value is shown (the "winner");    *)
(*   - an I-cache (inconsistent cache, section 4): Key -> set of writes   *)
(*     [key, val, vc, deps] not yet known to be on every server;          *)
(*   - mg: Key -> the clocks of the writes merged into its C-cache        *)
(*     (Fig. 7's has_seen needs them; the Rust model keeps the last 16);  *)
(*   - a global vector clock GVC (section 5.2): its own write count plus  *)
(*     the clocks of the writes it revealed as a tail.                    *)
(* Servers 0..N-1 form N interleaved propagation chains (section 5.2,     *)
(* Fig. 5): server h heads the chain h -> h+1 -> ... -> h-1, whose tail   *)
(* h-1 reveals the write (integrates it into its C-cache).  Links are     *)
(* FIFO, unbounded and lossless; one FIFO link per ring edge s -> s+1     *)
(* carries the messages of all chains.                                     *)
(*                                                                         *)
(* Clients (workflows) carry `deps` (the exact versions they read) and    *)
(* `local` (all their own writes, with deps) from function to function    *)
(* (section 6, Fig. 10); every operation picks its server freely, which   *)
(* is how roaming is modelled.                                             *)
(***************************************************************************)
EXTENDS Naturals, Sequences, FiniteSets, TLC

CONSTANTS
    N,            \* number of cache servers; the servers are 0..N-1
    Keys,         \* keys (model values)
    Clients,      \* clients, i.e. workflows (model values)
    MaxOps,       \* operations each client performs
    InitVal,      \* model value: what every key holds before any write
    Mutant,       \* which protocol variant: "none" is the protocol
    Chain,        \* "one_round" (paper, Fig. 7) or "two_round" (authors' later chain)
    Integration   \* "exact" (Fig. 3: this version) or "dominance" (the authors' code)

Mutants == {"none", "no_carry_local_writes", "reveal_at_head",
            "nearest_deps_only", "read_without_integration",
            "dissemination_skips_head"}

ASSUME N \in Nat /\ N >= 2
ASSUME MaxOps \in Nat
ASSUME Mutant \in Mutants
ASSUME Chain \in {"one_round", "two_round"}
ASSUME Integration \in {"exact", "dominance"}

VARIABLES
    cc,      \* cc[s][k]    : C-cache entry [val, vc, win]
    ic,      \* ic[s][k]    : I-cache, a set of writes [key, val, vc, deps]
    mg,      \* mg[s][k]    : clocks of the writes merged into s's C-cache
    gvc,     \* gvc[s]      : server s's global vector clock
    chan,    \* chan[s]     : FIFO link s -> Succ(s), a sequence of chain messages
    deps,    \* deps[c]     : the exact versions the client depends on, <<key, vc>>
    local,   \* local[c]    : every write the client made, with its deps
    hist,    \* hist[c]     : the client's completed operations, in session order
    dis,     \* dis         : dissemination in flight: a set of [to, dep] (section 5.2)
    fl       \* fl[s]       : with synchronous flushes, s's chain messages waiting for
             \*               the database's acknowledgement, in order

serverVars == <<cc, ic, mg, gvc, chan, dis, fl>>
clientVars == <<deps, local, hist>>
vars == <<cc, ic, mg, gvc, chan, dis, fl, deps, local, hist>>

\* Dissemination (section 5.2: "the tail of the chain has the option to disseminate
\* the write to other servers, asking them to integrate the write into their
\* C-caches"): off unless a config overrides it (`Disseminate <- On`).
Disseminate == FALSE
On == TRUE

\* Database flushes (section 5.2): "async" (the write is acknowledged and sent down
\* its chain at once, as in the authors' evaluation) unless a config overrides it
\* with "sync" (`DbFlush <- Sync`: both wait for the database's acknowledgement).
DbFlush == "async"
Sync == "sync"

\* Readings of the paper where it is ambiguous (README.md, "Independence"): ours
\* by default; a config overrides one with the paper's literal reading.
\*   WriteClock: "join" (a new write's clock is the GVC joined with its deps, the
\*     head's entry incremented) or "increment" (Fig. 7 line 8: the GVC, incremented).
\*   Resolution: "winner" (a merge shows the write with the largest clock) or
\*     "merged" (section 3.2 read literally: a write wins only against the entry's
\*     merged clock, which a concurrent write may have inflated).
\*   TxnAbort: "lex" (a read transaction aborts when the client's own write of a key
\*     would win against the version returned) or "covered" (Fig. 8 line 7: when the
\*     returned merged clock does not cover the client's own write).
\*   ChainCarries: "local" (a chain message carries the client's writes, as Fig. 7
\*     lines 29-30 read `local` in ServerWrite) or "none" (Fig. 4's ServerWrite
\*     carries the write alone; the head still adds `local` to its own I-cache).
WriteClock == "join"
Resolution == "winner"
TxnAbort == "lex"
ChainCarries == "local"
Increment == "increment"
Merged == "merged"
NoCarry == "none"
Covered == "covered"

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
\* Lexicographic order: the deterministic order of conflict resolution.
LexLess(a, b) ==
    \E i \in Servers : a[i] < b[i] /\ \A j \in Servers : j < i => a[j] = b[j]
LexMax(S) == CHOOSE m \in S : \A x \in S : ~LexLess(m, x)

-----------------------------------------------------------------------------
(* Conflict resolution (section 3.2).  Merging versions joins their clocks *)
(* and shows the value of the write with the lexicographically largest    *)
(* clock among all writes merged.  A write's clock dominates its causal   *)
(* past (ClientWrite), so a newer write always wins over an older one;    *)
(* being a maximum, the result does not depend on the order of merges.    *)
(* The comparison is between writes, not merged clocks: a clock inflated  *)
(* by a concurrent write must not let an older value win.                 *)

\* Merge the set of writes W into the C-cache entry e (or a client's view).
MergeInto(e, W) ==
    LET best == LexMax({w.vc : w \in W} \cup {Zero})
        top  == IF Resolution = "winner" THEN LexMax({e.win} \cup {w.vc : w \in W})
                ELSE IF LexLess(e.vc, best) THEN best ELSE e.win
    IN  [val |-> IF top = e.win THEN e.val ELSE (CHOOSE w \in W : w.vc = top).val,
         vc  |-> JoinAll({e.vc} \cup {w.vc : w \in W}),
         win |-> top]

InitEntry == [val |-> InitVal, vc |-> Zero, win |-> Zero]

-----------------------------------------------------------------------------
(* Integration (section 4, Fig. 3).                                        *)
(*                                                                         *)
(* A dependency <<k, v>> names a version of key k.  Integration moves the  *)
(* I-cache writes a set of dependencies names into the C-cache, and       *)
(* (unless nearest_deps_only) the writes their dependencies name, to a    *)
(* fixpoint.  Which writes does <<k, v>> name?                            *)
(*   "exact"     : the write whose clock is v (Fig. 3: "this version").   *)
(*   "dominance" : every write of k whose clock is <= v (the authors'     *)
(*                 code and TLA+).  A head's clocks order all its writes, *)
(*                 so this also pulls causally unrelated writes of that   *)
(*                 head, possibly before they reached every server.       *)
(* A dependency that names nothing in the I-cache is already merged (or   *)
(* has not arrived yet: then nothing is pulled for it).                    *)

Names(e, d) ==
    /\ e.key = d[1]
    /\ IF Integration = "exact" THEN e.vc = d[2] ELSE Leq(e.vc, d[2])

Pulled(E, D) == {e \in E : \E d \in D : Names(e, d)}

RECURSIVE Closure(_, _)
Closure(E, D) ==
    LET D2 == D \cup UNION {e.deps : e \in Pulled(E, D)}
    IN  IF D2 = D THEN D ELSE Closure(E, D2)

\* Integrate the dependencies D into server s, whose I-cache is icS (the
\* server's current I-cache, or one with writes just added).  Returns the new
\* C-cache, I-cache and merged clocks of s.
IntegrateAt(s, icS, D) ==
    LET E == UNION {icS[k] : k \in Keys}
        W == Pulled(E, IF Mutant = "nearest_deps_only" THEN D ELSE Closure(E, D))
    IN  [cc |-> [k \in Keys |-> MergeInto(cc[s][k], {w \in W : w.key = k})],
         ic |-> [k \in Keys |-> icS[k] \ W],
         mg |-> [k \in Keys |-> mg[s][k] \cup {w.vc : w \in {x \in W : x.key = k}}]]

\* Fig. 7 lines 9-11 and 29-30: add to s's I-cache the writes of W it has not
\* seen: not in its I-cache and not merged into its C-cache.  Being covered by
\* the C-cache's clock is not enough: what covers a write may be an unrelated
\* newer version, and the write's own dependencies must stay known.
Seen(s, icS, l) == (\E e \in icS[l.key] : e.vc = l.vc) \/ l.vc \in mg[s][l.key]
AddUnseen(s, icS, W) ==
    [k \in Keys |-> icS[k] \cup {l \in W : l.key = k /\ ~Seen(s, icS, l)}]

\* The dependency on one write.
DepOn(w) == <<w.key, w.vc>>

-----------------------------------------------------------------------------

TypeOK ==
    /\ gvc \in [Servers -> [Servers -> Nat]]
    /\ \A s \in Servers : DOMAIN cc[s] = Keys /\ DOMAIN ic[s] = Keys /\ DOMAIN mg[s] = Keys
    /\ \A s \in Servers, k \in Keys :
          /\ cc[s][k].vc \in [Servers -> Nat]
          /\ cc[s][k].win \in [Servers -> Nat]
          /\ \A w \in ic[s][k] : w.key = k
    /\ \A s \in Servers : \A i \in 1..Len(chan[s]) :
          chan[s][i].head \in Servers /\ chan[s][i].round \in {1, 2}
    /\ \A c \in Clients : \A d \in deps[c] : d[1] \in Keys /\ d[2] \in [Servers -> Nat]
    /\ \A c \in Clients : Len(hist[c]) <= MaxOps

Init ==
    /\ cc    = [s \in Servers |-> [k \in Keys |-> InitEntry]]
    /\ ic    = [s \in Servers |-> [k \in Keys |-> {}]]
    /\ mg    = [s \in Servers |-> [k \in Keys |-> {}]]
    /\ gvc   = [s \in Servers |-> Zero]
    /\ chan  = [s \in Servers |-> <<>>]
    /\ deps  = [c \in Clients |-> {}]
    /\ local = [c \in Clients |-> {}]
    /\ hist  = [c \in Clients |-> <<>>]
    /\ dis   = {}
    /\ fl    = [s \in Servers |-> <<>>]

\* A client may issue another operation: it has operations left, and no read
\* transaction of it aborted.  An abort aborts the workflow (section 5.4, "the
\* client library notifies the scheduler"); its retry would be a new workflow,
\* which these bounds leave out.
Active(c) ==
    /\ Len(hist[c]) < MaxOps
    \* With synchronous flushes the client waits for its write's acknowledgement.
    /\ \A s \in Servers : \A i \in 1..Len(fl[s]) : fl[s][i].w.val[1] /= c
    /\ \A i \in 1..Len(hist[c]) : hist[c][i].ok

\* Which operation a client may issue next: any (op "r", "w" or "rt" at server s on
\* key, or key set, k).  Scripted configs override ClientMay and ClientFinished
\* with a fixed script (CausalMeshScripted.tla; `ClientMay <- ScriptMay`).
ClientMay(c, op, s, k) == TRUE
\* The client will issue no more operations.
ClientFinished(c) == ~Active(c)

\* The client's dependencies on key k (their clocks).
DepsOn(c, k) == {d[2] : d \in {x \in deps[c] : x[1] = k}}

\* The client's request and the server's handler run as one atomic step, and so
\* does the client library's processing of the reply: the client blocks on the
\* RPC and nothing else can observe the reply in flight.

(* Read (section 5.3, Fig. 7 lines 2-4; client side Fig. 10 lines 2-8).  The *)
(* server integrates the client's dependencies and answers from its C-cache; *)
(* the client depends on the write it was shown (the entry's winner) and      *)
(* returns the newer of that version and its own writes of the key.           *)
ClientRead(c, s, k) ==
    /\ Active(c)
    /\ ClientMay(c, "r", s, k)
    /\ LET R    == IF Mutant = "read_without_integration"
                   THEN [cc |-> cc[s], ic |-> ic[s], mg |-> mg[s]]
                   ELSE IntegrateAt(s, ic[s], deps[c])
           got  == R.cc[k]
           ret  == MergeInto(got, {w \in local[c] : w.key = k})
       IN  /\ cc'   = [cc EXCEPT ![s] = R.cc]
           /\ ic'   = [ic EXCEPT ![s] = R.ic]
           /\ mg'   = [mg EXCEPT ![s] = R.mg]
           /\ deps' = IF got.win = Zero THEN deps
                      ELSE [deps EXCEPT ![c] = @ \cup {<<k, got.win>>}]
           /\ hist' = [hist EXCEPT ![c] = Append(@,
                        [op |-> "r", ok |-> TRUE, keys |-> {k},
                         val |-> [x \in {k} |-> ret.val],
                         vc  |-> [x \in {k} |-> got.vc],
                         dep |-> [x \in {k} |-> DepsOn(c, k)]])]
    /\ UNCHANGED <<gvc, chan, local, dis, fl>>

(* Write at the head of the server's own chain (section 5.2, Fig. 7 lines   *)
(* 7-19; client side Fig. 10 lines 10-13).  The client piggybacks all its   *)
(* writes (`local`, Fig. 6); the server adds the ones it has not seen to    *)
(* its I-cache and makes them dependencies of the new write.  The new       *)
(* write's clock dominates everything it depends on (the GVC joined with    *)
(* the dependencies, with the head's own count incremented), so conflict    *)
(* resolution never orders it before a version it causally follows; the    *)
(* GVC itself only counts the new write.  The chain message carries the     *)
(* client's writes too (Fig. 7 lines 29-30 read `local` in ServerWrite), in *)
(* both chains.                                                              *)
ClientWrite(c, s, k) ==
    /\ Active(c)
    /\ ClientMay(c, "w", s, k)
    /\ LET i       == Len(hist[c]) + 1
           carried == IF Mutant = "no_carry_local_writes" THEN {} ELSE local[c]
           wdeps   == deps[c] \cup {DepOn(l) : l \in carried}           \* line 12
           own     == gvc[s][s] + 1                                      \* line 8
           vc      == IF WriteClock = "join"
                      THEN [JoinAll({gvc[s]} \cup {d[2] : d \in wdeps}) EXCEPT ![s] = own]
                      ELSE [gvc[s] EXCEPT ![s] = own]
           w       == [key |-> k, val |-> <<c, i>>, vc |-> vc, deps |-> wdeps]
           icS     == [AddUnseen(s, ic[s], carried) EXCEPT ![k] = @ \cup {w}]  \* lines 9-11
           msg     == [w |-> w, head |-> s, round |-> 1,
                           carried |-> IF ChainCarries = "local" THEN carried ELSE {}]
           \* Mutant reveal_at_head: the head reveals the write at once.
           H       == IF Mutant = "reveal_at_head"
                      THEN IntegrateAt(s, icS, {DepOn(w)})
                      ELSE [cc |-> cc[s], ic |-> icS, mg |-> mg[s]]
       IN  /\ cc'    = [cc  EXCEPT ![s] = H.cc]
           /\ ic'    = [ic  EXCEPT ![s] = H.ic]
           /\ mg'    = [mg  EXCEPT ![s] = H.mg]
           /\ gvc'   = [gvc EXCEPT ![s][s] = own]
           \* With synchronous flushes the chain starts at the database's ack.
           /\ IF DbFlush = "sync"
              THEN /\ fl' = [fl EXCEPT ![s] = Append(@, msg)]
                   /\ UNCHANGED chan
              ELSE /\ chan' = [chan EXCEPT ![s] = Append(@, msg)]
                   /\ UNCHANGED fl
           /\ local' = [local EXCEPT ![c] = @ \cup {w}]
           /\ hist'  = [hist EXCEPT ![c] = Append(@,
                         [op |-> "w", ok |-> TRUE, keys |-> {k}, w |-> w])]
    /\ UNCHANGED <<deps, dis>>

(* Read transaction (section 5.4, Fig. 8): the server integrates the deps    *)
(* and answers every key from its C-cache; the client library aborts if one  *)
(* of its own writes would win against the version returned for its key      *)
(* (the cut lacks it).                                                        *)
ClientReadTxn(c, s, ks) ==
    /\ Active(c)
    /\ ClientMay(c, "rt", s, ks)
    /\ LET R     == IF Mutant = "read_without_integration"
                    THEN [cc |-> cc[s], ic |-> ic[s], mg |-> mg[s]]
                    ELSE IntegrateAt(s, ic[s], deps[c])
           abort == \E l \in local[c] :
                       /\ l.key \in ks
                       /\ IF TxnAbort = "lex" THEN LexLess(R.cc[l.key].win, l.vc)
                          ELSE ~Leq(l.vc, R.cc[l.key].vc)
       IN  /\ cc'   = [cc EXCEPT ![s] = R.cc]
           /\ ic'   = [ic EXCEPT ![s] = R.ic]
           /\ mg'   = [mg EXCEPT ![s] = R.mg]
           /\ IF abort
              THEN /\ hist' = [hist EXCEPT ![c] = Append(@,
                                [op |-> "rt", ok |-> FALSE, keys |-> ks])]
                   /\ UNCHANGED deps
              ELSE /\ deps' = [deps EXCEPT ![c] = @ \cup
                                {<<x, R.cc[x].win>> : x \in {y \in ks : R.cc[y].win /= Zero}}]
                   /\ hist' = [hist EXCEPT ![c] = Append(@,
                                [op |-> "rt", ok |-> TRUE, keys |-> ks,
                                 val |-> [x \in ks |-> R.cc[x].val],
                                 vc  |-> [x \in ks |-> R.cc[x].vc],
                                 dep |-> [x \in ks |-> DepsOn(c, x)]])]
    /\ UNCHANGED <<gvc, chan, local, dis, fl>>

(* ServerWrite (Fig. 4, Fig. 7 lines 21-33): server s takes the oldest      *)
(* message on the link from its predecessor, adds the write and the writes  *)
(* it carries to its I-cache (if not seen), and either passes it on or, as  *)
(* the tail in the last round, reveals it.  Three cases, one action each.   *)
InMsg(s) == Head(chan[Pred(s)])
Arrived(s, m) == AddUnseen(s, ic[s], m.carried \cup {m.w})

\* An intermediate hop (any round).
Forward(s) ==
    /\ chan[Pred(s)] /= <<>>
    /\ LET m == InMsg(s)
       IN  /\ ~IsTail(s, m.head)
           /\ ic' = [ic EXCEPT ![s] = Arrived(s, m)]
           /\ chan' = [chan EXCEPT ![Pred(s)] = Tail(@), ![s] = Append(@, m)]
    /\ UNCHANGED <<cc, mg, gvc, dis, fl, clientVars>>

\* Two-round chain: the tail stores the write like any hop and sends it round
\* the ring once more (round 2).
TailForward(s) ==
    /\ Chain = "two_round"
    /\ chan[Pred(s)] /= <<>>
    /\ LET m == InMsg(s)
       IN  /\ IsTail(s, m.head)
           /\ m.round = 1
           /\ ic' = [ic EXCEPT ![s] = Arrived(s, m)]
           /\ chan' = [chan EXCEPT ![Pred(s)] = Tail(@),
                                   ![s] = Append(@, [m EXCEPT !.round = 2])]
    /\ UNCHANGED <<cc, mg, gvc, dis, fl, clientVars>>

\* The tail reveals the write (Fig. 7 lines 22-27): one-round chain on
\* arrival, two-round chain on the second arrival.  It integrates the write,
\* and so (transitively) everything the write depends on, and its GVC absorbs
\* the write's clock.  With dissemination it asks every other server to
\* integrate the write too (the mutant dissemination_skips_head leaves out the
\* write's head, which holds it in its I-cache only).
TailIntegrate(s) ==
    /\ chan[Pred(s)] /= <<>>
    /\ LET m  == InMsg(s)
           R  == IntegrateAt(s, Arrived(s, m), {DepOn(m.w)})
           To == {t \in Servers \ {s} :
                    Mutant /= "dissemination_skips_head" \/ t /= m.head}
       IN  /\ IsTail(s, m.head)
           /\ Chain = "one_round" \/ m.round = 2
           /\ cc'   = [cc  EXCEPT ![s] = R.cc]
           /\ ic'   = [ic  EXCEPT ![s] = R.ic]
           /\ mg'   = [mg  EXCEPT ![s] = R.mg]
           /\ gvc'  = [gvc EXCEPT ![s] = Join(@, m.w.vc)]
           /\ chan' = [chan EXCEPT ![Pred(s)] = Tail(@)]
           /\ UNCHANGED fl
           /\ dis'  = IF Disseminate
                      THEN dis \cup {[to |-> t, dep |-> DepOn(m.w)] : t \in To}
                      ELSE dis
    /\ UNCHANGED clientVars

\* Synchronous flushes: the database acknowledged s's oldest pending write, which
\* starts down its chain (and its client is answered).
Flushed(s) ==
    /\ fl[s] /= <<>>
    /\ chan' = [chan EXCEPT ![s] = Append(@, Head(fl[s]))]
    /\ fl'   = [fl EXCEPT ![s] = Tail(@)]
    /\ UNCHANGED <<cc, ic, mg, gvc, dis, clientVars>>

\* Server s integrates a write the tail disseminated to it.  Every server
\* holds the write already (the chain passed it), so the order of
\* disseminations does not matter: they travel as a set.
Disseminated(s) ==
    /\ \E d \in dis :
          /\ d.to = s
          /\ LET R == IntegrateAt(s, ic[s], {d.dep})
             IN  /\ cc'  = [cc EXCEPT ![s] = R.cc]
                 /\ ic'  = [ic EXCEPT ![s] = R.ic]
                 /\ mg'  = [mg EXCEPT ![s] = R.mg]
                 /\ dis' = dis \ {d}
    /\ UNCHANGED <<gvc, chan, fl, clientVars>>

\* Every client has finished and every link is empty: stutter, so that TLC's
\* deadlock check reports only genuine stalls.
Terminated ==
    /\ \A c \in Clients : ClientFinished(c)
    /\ \A s \in Servers : chan[s] = <<>>
    /\ dis = {}
    /\ \A s \in Servers : fl[s] = <<>>
    /\ UNCHANGED vars

Next ==
    \/ \E c \in Clients, s \in Servers, k \in Keys : ClientRead(c, s, k)
    \/ \E c \in Clients, s \in Servers, k \in Keys : ClientWrite(c, s, k)
    \/ \E c \in Clients, s \in Servers, ks \in TxnKeySets : ClientReadTxn(c, s, ks)
    \/ \E s \in Servers : Forward(s)
    \/ \E s \in Servers : TailForward(s)
    \/ \E s \in Servers : TailIntegrate(s)
    \/ \E s \in Servers : Disseminated(s)
    \/ \E s \in Servers : Flushed(s)
    \/ Terminated

Spec == Init /\ [][Next]_vars


\* Clients and keys are interchangeable (nothing in the protocol orders them),
\* so configs may declare SYMMETRY Symmetry.  Servers are not: the ring and
\* the lexicographic order of clocks order them.
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
\* write merged into server s's C-cache is covered by s's C-cache.
CCacheIsCausalCut ==
    \A s \in Servers : \A x \in AllWrites :
        x.vc \in mg[s][x.key] => \A d \in x.deps : Leq(d[2], cc[s][d[1]].vc)

\* "a revealed write is everywhere" (Lemma 1, cut coverage across servers):
\* whatever one server's C-cache holds for key k, every server holds as well,
\* in its C-cache or in its I-cache.  It is stated with the other server's own
\* state (not folded from the first server's, which would make it a
\* tautology), so it can fail: reveal_at_head breaks it at the first write.
CoverageLemma ==
    \A si, sj \in Servers : \A k \in Keys :
        Leq(cc[si][k].vc, JoinAll({cc[sj][k].vc} \cup {e.vc : e \in ic[sj][k]}))

\* "reads cover deps" (Theorem 2): every read (and every key of a committed
\* read transaction) got from the server a version at least as new as every
\* version of that key the client depended on.
ReadsCoverDeps ==
    \A c \in Clients : \A i \in 1..Len(hist[c]) :
        LET o == hist[c][i]
        IN  (o.op \in {"r", "rt"} /\ o.ok) =>
                \A k \in o.keys : \A d \in o.dep[k] : Leq(d, o.vc[k])

\* "reads are causally consistent": no read returns a value (or the initial
\* value) of key k when its causal past holds a write to k that is newer than
\* the value returned, i.e. a write that has the returned write in its own
\* causal past.  A client's own earlier writes count.  A read transaction is
\* one operation, so this also says that its keys come from one causally
\* consistent snapshot.
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

\* "reads are causal+" (CCv; the paper's causal+ without its convergence clause,
\* which is the liveness property CachesConverge), with the paper's arbitration
\* order (section 3.2: the lexicographic order of write clocks): a read returns,
\* of the writes of its key in its causal past, one that no other write there
\* causally follows (ReadsAreCausallyConsistent) and that is the last in
\* arbitration order, so a concurrent write that arbitration puts later may not
\* be skipped either.  Judged on what reads observe: a pair of writes that no
\* read sees together cannot contradict it.  ReadIsCausalPlus below is its
\* step-local form, for trace validation.
BadReadPlus(o, k) ==
    LET v == Op(o).val[k]
    IN  \E p \in CausalPast(o) :
           /\ IsWriteOp(p)
           /\ Op(p).w.key = k
           /\ p /= WriterOf(v)
           /\ \/ v = InitVal
              \/ WriterOf(v) \in CausalPast(p)
              \/ LexLess(Op(WriterOf(v)).w.vc, Op(p).w.vc)

HistoryIsCausalPlus ==
    \A o \in OpIds : IsReadOp(o) => \A k \in Op(o).keys : ~BadReadPlus(o, k)

-----------------------------------------------------------------------------
(* Witnesses against vacuity ("sometimes" properties).  Each Not... operator  *)
(* is checked as an invariant by a config that expects TLC to violate it:    *)
(* the counterexample shows the behaviour is reachable, so the invariants    *)
(* above are not passing because nothing happens.                            *)

\* "a remote write becomes visible": some client read a value another client wrote.
RemoteWriteVisible ==
    \E o \in OpIds : IsReadOp(o) /\ \E k \in Op(o).keys :
        Op(o).val[k] /= InitVal /\ WriterOf(Op(o).val[k])[1] /= o[1]
NotRemoteWriteVisible == ~RemoteWriteVisible

\* "a read transaction aborts" (Fig. 8 line 8).
TxnAborted == \E c \in Clients : \E i \in 1..Len(hist[c]) :
    hist[c][i].op = "rt" /\ ~hist[c][i].ok
NotTxnAborted == ~TxnAborted

-----------------------------------------------------------------------------
(* Step-local forms of the invariants, for trace validation.  A simulator   *)
(* trace is one behaviour thousands of steps long; re-checking the whole    *)
(* state after every step makes validation quadratic in its length.  Every  *)
(* action changes the caches of one server s only, and appends at most one  *)
(* operation to the history of one client (cs: that client, or none), so    *)
(* checking what a step changed is exact, given that C-cache clocks and     *)
(* merged sets only grow (checked as well, by CCacheGrowsStep).             *)

\* The keys whose C-cache, I-cache or merged clocks at s the step changed.
Touched(s) == {k \in Keys : cc'[s][k] /= cc[s][k] \/ ic'[s][k] /= ic[s][k] \/ mg'[s][k] /= mg[s][k]}

\* The operations the step completed: none, or the last of one client's.
NewOps(cs) == {<<c, Len(hist'[c])>> : c \in {x \in cs : Len(hist'[x]) > Len(hist[x])}}
OpNow(o) == hist'[o[1]][o[2]]

TypeOKStep(s, ks, cs) ==
    /\ gvc'[s] \in [Servers -> Nat]
    /\ \A k \in ks :
          /\ cc'[s][k].vc \in [Servers -> Nat]
          /\ cc'[s][k].win \in [Servers -> Nat]
          /\ \A w \in ic'[s][k] : w.key = k
    /\ \A t \in {s, Pred(s)} : \A i \in 1..Len(chan'[t]) :
          chan'[t][i].head \in Servers /\ chan'[t][i].round \in {1, 2}
    /\ \A c \in cs : /\ \A d \in deps'[c] : d[1] \in Keys /\ d[2] \in [Servers -> Nat]
                     /\ Len(hist'[c]) <= MaxOps

CCacheGrowsStep(s, ks) ==
    \A k \in ks : Leq(cc[s][k].vc, cc'[s][k].vc) /\ mg[s][k] \subseteq mg'[s][k]

\* A write newly merged at s has its dependencies covered; so has a write that
\* newly appears in the history (reveal_at_head merges it at its head at once).
\* writesOf[k]: the ids of the history's writes of k before the step.
CCacheIsCausalCutStep(s, ks, cs, writesOf) ==
    LET covered(t, x) == \A d \in x.deps : Leq(d[2], cc'[t][d[1]].vc)
    IN  /\ \A k \in ks : \A o \in writesOf[k] :
              OpNow(o).w.vc \in mg'[s][k] \ mg[s][k] => covered(s, OpNow(o).w)
        /\ \A o \in NewOps(cs) : OpNow(o).op = "w" =>
              \A t \in Servers : OpNow(o).w.vc \in mg'[t][OpNow(o).w.key] => covered(t, OpNow(o).w)

CoverageLemmaStep(s, ks) ==
    \A k \in ks : \A t \in Servers :
        /\ Leq(cc'[s][k].vc, JoinAll({cc'[t][k].vc} \cup {e.vc : e \in ic'[t][k]}))
        /\ Leq(cc'[t][k].vc, JoinAll({cc'[s][k].vc} \cup {e.vc : e \in ic'[s][k]}))

ReadsCoverDepsStep(cs) ==
    \A o \in NewOps(cs) :
        LET op == OpNow(o)
        IN  (op.op \in {"r", "rt"} /\ op.ok) => \A k \in op.keys : \A d \in op.dep[k] : Leq(d, op.vc[k])

(* The history property, incrementally: causal+ (CCv).  A causal past is     *)
(* downward closed in session order, so it is a sparse clock: a function     *)
(* from the clients it reaches to the last of their operations it holds.     *)
(* The trace carries each client's past (that of its next operation), each   *)
(* write's past, and each client's greatest write clock seen; an operation   *)
(* is checked once, when it completes.  The arbitration is the paper's       *)
(* conflict resolution (section 3.2): the lexicographic order of write       *)
(* clocks.  Causal+ holds if that order extends causality (each write's      *)
(* clock is above those of the writes in its past) and each read returns the *)
(* last, in that order, of the writes of its key in its past (so also CC:    *)
(* none of them has the returned version in its own past).  A violation says *)
(* the protocol's own arbitration is no witness; the simulator's checker     *)
(* decides CCv over every arbitration.                                       *)

NoPast == [x \in {} |-> 0]
PastJoin(a, b) ==
    [x \in DOMAIN a \cup DOMAIN b |->
        IF x \notin DOMAIN a THEN b[x]
        ELSE IF x \notin DOMAIN b THEN a[x]
        ELSE IF a[x] >= b[x] THEN a[x] ELSE b[x]]
RECURSIVE PastJoinAll(_, _)
PastJoinAll(P, S) == IF S = {} THEN P
                     ELSE LET x == CHOOSE y \in S : TRUE IN PastJoinAll(PastJoin(P, x), S \ {x})
InPast(o, P) == o[1] \in DOMAIN P /\ o[2] <= P[o[1]]
Just(o) == o[1] :> o[2]

\* The writes a completed read returned (not the initial value).
ReadFrom(op) == IF op.op \in {"r", "rt"} /\ op.ok
                THEN {op.val[k] : k \in {x \in op.keys : op.val[x] /= InitVal}}
                ELSE {}

\* The causal past of a client's new operation op: the client's past (its
\* earlier operations and their pasts) and each write op read, with its past.
PastOf(op, clientPast, writePast) ==
    PastJoinAll(clientPast, {PastJoin(writePast[v], Just(v)) : v \in ReadFrom(op)})

WriteVc(o) == Op(o).w.vc

\* Each other write of a read key in the read's past (P) is ordered before the
\* version returned, and has not got it in its own past (CC; also for InitVal).
ReadIsCausalPlus(op, P, writesOf, writePast) ==
    \A k \in op.keys :
        LET v     == op.val[k]
            older == {p \in writesOf[k] : InPast(p, P) /\ p /= v}
        IN  \A p \in older : /\ v /= InitVal
                             /\ ~InPast(v, writePast[p])
                             /\ LexLess(WriteVc(p), WriteVc(v))

-----------------------------------------------------------------------------
(* Liveness.  Under weak fairness every enabled step is eventually taken: the *)
(* clients finish their operations and every message is delivered.           *)

FairSpec == Spec /\ WF_vars(Next)

Quiet ==
    /\ \A c \in Clients : ClientFinished(c)
    /\ \A s \in Servers : chan[s] = <<>>
    /\ dis = {}
    /\ \A s \in Servers : fl[s] = <<>>

\* "every write reaches every server": once the system is quiet, each
\* write a client made is in every server's I-cache or merged into its C-cache.
Everywhere(w) == \A s \in Servers : (\E e \in ic[s][w.key] : e.vc = w.vc) \/ w.vc \in mg[s][w.key]
WritesReachEveryServer == <>(Quiet /\ \A w \in AllWrites : Everywhere(w))

\* "the C-caches converge" (causal+, clause 4): once the system is quiet (every
\* client done, every message delivered: it stays so), every server shows the
\* same value of every key.  It needs dissemination: without it a non-tail
\* server integrates a write only when a read there depends on it.  Stated as
\* <>(Quiet /\ Converged), which is <>[]Converged here since Quiet lasts; the
\* Stateright model checks the same at its terminal states.
Converged == \A s1, s2 \in Servers : \A k \in Keys : cc[s1][k].win = cc[s2][k].win
CachesConverge == <>(Quiet /\ Converged)

=============================================================================
