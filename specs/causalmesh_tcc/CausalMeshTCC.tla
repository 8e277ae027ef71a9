---------------------------- MODULE CausalMeshTCC ----------------------------
(***************************************************************************)
(* CausalMesh-TCC (Zhang, Angel, Mu, Liu; VLDB'25, section 7): every      *)
(* serverless workflow is a transaction with transactional causal         *)
(* consistency (TCC).  Written from the paper, not from causim's Rust     *)
(* model; README.md next to this file maps each action to the paper and  *)
(* lists the choices.                                                      *)
(*                                                                         *)
(*   - Writes are buffered by the client library and sent at the end of  *)
(*     the workflow as one batch; the batch gets one vector clock at the  *)
(*     server that receives it (its head), travels the head's propagation *)
(*     chain (one round, as in CausalMesh), and the tail integrates it:   *)
(*     a write is integrated only with its whole batch.                   *)
(*   - The C-cache keeps, per key, a list of at most Ring versions (a     *)
(*     ring buffer, oldest first).  Integration appends one new merged    *)
(*     version per key it touches (Fig. 11 lines 10-13).                  *)
(*   - A read integrates the workflow's read set, then returns the oldest *)
(*     version of its key that forms a cut with the read set (Fig. 11     *)
(*     line 18); if none does, the workflow aborts.                       *)
(*   - Parallel branches read independently; a join validates that the   *)
(*     union of their read sets forms a cut, or aborts the workflow.      *)
(*                                                                         *)
(* What "forms a cut" means is the question this spec exists to ask      *)
(* (CONSTANT CutRule): with "transitive", no write read may have in its   *)
(* causal past a write of another key read that is newer than the one    *)
(* read; with "direct" (Fig. 11 taken literally), only each write's       *)
(* direct dependencies are compared.                                       *)
(*                                                                         *)
(* Workflows follow a fixed plan (CONSTANTS Plan and WritesOf); each      *)
(* function picks its server freely, which is how roaming is modelled.   *)
(* Each write is identified by <<workflow, key>> and the initial version *)
(* of key k by <<InitVal, k>>; the causal order of writes is ghost state *)
(* (`wr`), used to state what a cut is and what clients may observe.     *)
(***************************************************************************)
EXTENDS Naturals, Sequences, FiniteSets, TLC

CONSTANTS
    N,         \* number of cache servers; the servers are 0..N-1
    Keys,      \* keys (model values)
    Txns,      \* workflows, each one transaction (model values)
    InitVal,   \* model value: the writer of every key's initial version
    Ring,      \* versions each C-cache keeps per key (the ring buffer's size)
    Plan,      \* Plan[t]: a sequence of branches, each a sequence of keys to read;
               \*   one branch is a chain of functions, several run in parallel and join
    WritesOf,  \* WritesOf[t]: the keys t writes, as one batch, after its reads
    CutRule,   \* "transitive" (ours) or "direct" (Fig. 11 line 18 taken literally)
    Mutant     \* "none", or a named bug of the Rust model the spec can express

Mutants == {"none", "tcc_ignores_cut", "join_checks_direct_deps"}

ASSUME N \in Nat /\ N >= 2
ASSUME Ring \in Nat /\ Ring >= 1
ASSUME CutRule \in {"transitive", "direct"}
ASSUME Mutant \in Mutants
ASSUME \A t \in Txns : Len(Plan[t]) >= 1 /\ WritesOf[t] \subseteq Keys

VARIABLES
    cc,     \* cc[s][k]  : C-cache of s for k: a sequence of [win, vc], oldest first
    ic,     \* ic[s]     : I-cache of s: the ids of the writes it holds, not yet integrated
    gvc,    \* gvc[s]    : server s's global vector clock
    chan,   \* chan[s]   : FIFO link s -> Succ(s): a sequence of [ids, head]
    wr,     \* wr[id]    : ghost: [made, vc, deps] of every write (made once committed)
    pc,     \* pc[t][b]  : how many reads branch b of workflow t has done
    rs,     \* rs[t][b]  : the write ids branch b of t has read
    phase,  \* phase[t]  : "read", "joined", "done" (committed) or "aborted"
    joins   \* ghost: the read sets some join accepted

vars == <<cc, ic, gvc, chan, wr, pc, rs, phase, joins>>

Servers == 0..(N - 1)
Succ(s) == (s + 1) % N
Pred(s) == (s + N - 1) % N
IsTail(s, h) == Succ(s) = h

Ids == (Txns \cup {InitVal}) \X Keys
KeyOf(id) == id[2]
Init0(k) == <<InitVal, k>>
IsInit(id) == id[1] = InitVal
Branches(t) == 1..Len(Plan[t])

-----------------------------------------------------------------------------
(* Vector clocks and conflict resolution (section 3.2), as in CausalMesh.  *)

Zero == [i \in Servers |-> 0]
Leq(a, b) == \A i \in Servers : a[i] <= b[i]
Join(a, b) == [i \in Servers |-> IF a[i] >= b[i] THEN a[i] ELSE b[i]]
MaxNat(S) == CHOOSE m \in S : \A x \in S : x <= m
JoinAll(S) == [i \in Servers |-> MaxNat({v[i] : v \in S} \cup {0})]
LexLess(a, b) ==
    \E i \in Servers : a[i] < b[i] /\ \A j \in Servers : j < i => a[j] = b[j]

-----------------------------------------------------------------------------
(* The causal order of writes (ghost).  A write depends on the versions its *)
(* workflow read and on the other writes of its batch (they are atomic).    *)

RECURSIVE Grow(_)
Grow(S) == LET S2 == S \cup UNION {wr[x].deps : x \in S}
           IN  IF S2 = S THEN S ELSE Grow(S2)

\* The causal past of a write (every write it transitively depends on).
Past(id) == Grow(wr[id].deps)

\* a is a newer version of its key than b: b is the initial version, or in a's past.
Newer(a, b) ==
    /\ KeyOf(a) = KeyOf(b)
    /\ a /= b
    /\ IsInit(b) \/ b \in Past(a)

\* What each write read in R needs, under the rule: its direct dependencies or
\* its whole causal past.
Needs(id, rule) == IF rule = "direct" THEN wr[id].deps ELSE Past(id)

\* R (a set of write ids) forms a cut: one version per key, and no write in R
\* needs a version of another key newer than the one in R.
IsCut(R, rule) ==
    /\ \A a, b \in R : KeyOf(a) = KeyOf(b) => a = b
    /\ \A a, b \in R : ~\E d \in Needs(a, rule) : Newer(d, b)

-----------------------------------------------------------------------------
(* The dual cache.                                                          *)

Newest(q) == q[Len(q)]
Keep(q) == IF Len(q) > Ring THEN SubSeq(q, Len(q) - Ring + 1, Len(q)) ELSE q

\* The writes an integration of D pulls from I-cache E: those D names, and
\* transitively those their dependencies name (a batch's writes name each other).
RECURSIVE Pull(_, _)
Pull(E, D) == LET P  == E \cap D
                  D2 == D \cup UNION {wr[x].deps : x \in P}
              IN  IF D2 = D THEN P ELSE Pull(E, D2)

\* The version that results from merging writes W into version v.
MergeInto(v, W) ==
    LET top == CHOOSE x \in {v.win} \cup W :
                   \A y \in {v.win} \cup W : ~LexLess(wr[x].vc, wr[y].vc)
    IN  [win |-> top, vc |-> JoinAll({v.vc} \cup {wr[x].vc : x \in W})]

\* Integrate the writes D names into server s, whose I-cache is E: returns s's
\* new C-cache and I-cache.  Each key with pulled writes gets one new version.
IntegrateAt(s, E, D) ==
    LET W == Pull(E, D)
    IN  [cc |-> [k \in Keys |->
                   LET Wk == {x \in W : KeyOf(x) = k}
                   IN  IF Wk = {} THEN cc[s][k]
                       ELSE Keep(Append(cc[s][k], MergeInto(Newest(cc[s][k]), Wk)))],
         ic |-> E \ W]

-----------------------------------------------------------------------------

ReadSet(t) == UNION {rs[t][b] : b \in Branches(t)}
Finished(t, b) == pc[t][b] = Len(Plan[t][b])

TypeOK ==
    /\ \A s \in Servers : \A k \in Keys :
          /\ 1 <= Len(cc[s][k]) /\ Len(cc[s][k]) <= Ring
          /\ \A i \in 1..Len(cc[s][k]) : KeyOf(cc[s][k][i].win) = k
    /\ \A s \in Servers : ic[s] \subseteq Ids
    /\ \A t \in Txns : phase[t] \in {"read", "joined", "done", "aborted"}

Init ==
    /\ cc    = [s \in Servers |-> [k \in Keys |-> <<[win |-> Init0(k), vc |-> Zero]>>]]
    /\ ic    = [s \in Servers |-> {}]
    /\ gvc   = [s \in Servers |-> Zero]
    /\ chan  = [s \in Servers |-> <<>>]
    /\ wr    = [id \in Ids |-> [made |-> IsInit(id), vc |-> Zero, deps |-> {}]]
    /\ pc    = [t \in Txns |-> [b \in Branches(t) |-> 0]]
    /\ rs    = [t \in Txns |-> [b \in Branches(t) |-> {}]]
    /\ phase = [t \in Txns |-> "read"]
    /\ joins = {}

(* A function of branch b of workflow t reads its next key at server s      *)
(* (Fig. 11 ClientReadTCC): s integrates the branch's read set, then serves *)
(* the oldest version that forms a cut with it, or the workflow aborts.     *)
(* The mutant tcc_ignores_cut serves the newest version.                   *)
Read(t, b, s) ==
    /\ phase[t] = "read"
    /\ ~Finished(t, b)
    /\ LET k   == Plan[t][b][pc[t][b] + 1]
           R   == IntegrateAt(s, ic[s], rs[t][b])
           q   == R.cc[k]
           ok  == {i \in 1..Len(q) : IsCut(rs[t][b] \cup {q[i].win}, CutRule)}
           pick == IF Mutant = "tcc_ignores_cut" THEN {Len(q)} ELSE ok
       IN  /\ cc' = [cc EXCEPT ![s] = R.cc]
           /\ ic' = [ic EXCEPT ![s] = R.ic]
           /\ IF pick = {}
              THEN /\ phase' = [phase EXCEPT ![t] = "aborted"]
                   /\ UNCHANGED <<pc, rs>>
              ELSE LET i == CHOOSE i \in pick : \A j \in pick : i <= j
                   IN  /\ rs' = [rs EXCEPT ![t][b] = @ \cup {q[i].win}]
                       /\ pc' = [pc EXCEPT ![t][b] = @ + 1]
                       /\ UNCHANGED phase
    /\ UNCHANGED <<gvc, chan, wr, joins>>

(* The validation phase at a join (section 7): once every branch is done, the *)
(* function after the join asks its server s, which integrates the union of  *)
(* the branches' read sets and checks that it forms a cut.  The mutant        *)
(* join_checks_direct_deps compares direct dependencies only.                 *)
JoinRule == IF Mutant = "join_checks_direct_deps" THEN "direct" ELSE CutRule

ValidateJoin(t, s) ==
    /\ phase[t] = "read"
    /\ Len(Plan[t]) > 1
    /\ \A b \in Branches(t) : Finished(t, b)
    /\ LET R == IntegrateAt(s, ic[s], ReadSet(t))
       IN  /\ cc' = [cc EXCEPT ![s] = R.cc]
           /\ ic' = [ic EXCEPT ![s] = R.ic]
           /\ IF IsCut(ReadSet(t), JoinRule)
              THEN /\ phase' = [phase EXCEPT ![t] = "joined"]
                   /\ joins' = joins \cup {ReadSet(t)}
              ELSE /\ phase' = [phase EXCEPT ![t] = "aborted"]
                   /\ UNCHANGED joins
    /\ UNCHANGED <<gvc, chan, wr, pc, rs>>

\* A chain (one branch) needs no validation: its reads already form a cut.
ChainDone(t) ==
    /\ phase[t] = "read"
    /\ Len(Plan[t]) = 1
    /\ Finished(t, 1)
    /\ phase' = [phase EXCEPT ![t] = "joined"]
    /\ UNCHANGED <<cc, ic, gvc, chan, wr, pc, rs, joins>>

(* The sink commits at server s: the batch of t's writes gets one vector     *)
(* clock above everything t read (the head's count incremented); each write  *)
(* depends on the versions t read and on the batch's other writes.  The head *)
(* holds the batch in its I-cache and sends it down its chain.               *)
Commit(t, s) ==
    /\ phase[t] = "joined"
    /\ LET read  == {x \in ReadSet(t) : ~IsInit(x)}
           batch == {<<t, k>> : k \in WritesOf[t]}
           own   == gvc[s][s] + 1
           vc    == [JoinAll({gvc[s]} \cup {wr[x].vc : x \in read}) EXCEPT ![s] = own]
       IN  /\ phase' = [phase EXCEPT ![t] = "done"]
           /\ IF batch = {}
              THEN UNCHANGED <<ic, gvc, chan, wr>>
              ELSE /\ wr' = [id \in Ids |->
                              IF id \in batch
                              THEN [made |-> TRUE, vc |-> vc, deps |-> read \cup (batch \ {id})]
                              ELSE wr[id]]
                   /\ ic'   = [ic EXCEPT ![s] = @ \cup batch]
                   /\ gvc'  = [gvc EXCEPT ![s][s] = own]
                   /\ chan' = [chan EXCEPT ![s] = Append(@, [ids |-> batch, head |-> s])]
    /\ UNCHANGED <<cc, pc, rs, joins>>

InMsg(s) == Head(chan[Pred(s)])

\* An intermediate hop stores the batch and passes it on.
Forward(s) ==
    /\ chan[Pred(s)] /= <<>>
    /\ ~IsTail(s, InMsg(s).head)
    /\ ic'   = [ic EXCEPT ![s] = @ \cup InMsg(s).ids]
    /\ chan' = [chan EXCEPT ![Pred(s)] = Tail(@), ![s] = Append(@, InMsg(s))]
    /\ UNCHANGED <<cc, gvc, wr, pc, rs, phase, joins>>

\* The tail integrates the whole batch (and whatever it depends on).
TailIntegrate(s) ==
    /\ chan[Pred(s)] /= <<>>
    /\ LET m == InMsg(s)
           R == IntegrateAt(s, ic[s] \cup m.ids, m.ids)
       IN  /\ IsTail(s, m.head)
           /\ cc'   = [cc EXCEPT ![s] = R.cc]
           /\ ic'   = [ic EXCEPT ![s] = R.ic]
           /\ gvc'  = [gvc EXCEPT ![s] = JoinAll({@} \cup {wr[x].vc : x \in m.ids})]
           /\ chan' = [chan EXCEPT ![Pred(s)] = Tail(@)]
    /\ UNCHANGED <<wr, pc, rs, phase, joins>>

Terminated ==
    /\ \A t \in Txns : phase[t] \in {"done", "aborted"}
    /\ \A s \in Servers : chan[s] = <<>>
    /\ UNCHANGED vars

Next ==
    \/ \E t \in Txns, s \in Servers : \E b \in Branches(t) : Read(t, b, s)
    \/ \E t \in Txns, s \in Servers : ValidateJoin(t, s)
    \/ \E t \in Txns : ChainDone(t)
    \/ \E t \in Txns, s \in Servers : Commit(t, s)
    \/ \E s \in Servers : Forward(s)
    \/ \E s \in Servers : TailIntegrate(s)
    \/ Terminated

Spec == Init /\ [][Next]_vars

\* Weak fairness on the protocol's steps: a step that stays enabled is taken.
FairSpec == Spec /\ WF_vars(Next)

\* "every workflow ends": it commits or aborts, and every committed batch
\* reaches its tail (no read, join or chain waits for ever).
WorkflowsEnd ==
    <>(/\ \A t \in Txns : phase[t] \in {"done", "aborted"}
       /\ \A s \in Servers : chan[s] = <<>>)

-----------------------------------------------------------------------------
(* Invariants.  The English names are shared with the Rust model's checks. *)

\* "the C-cache is a causal cut" (Definition 1): every dependency of a version
\* in a C-cache is covered by the newest version of its key there.
CCacheIsCausalCut ==
    \A s \in Servers : \A k \in Keys : \A i \in 1..Len(cc[s][k]) :
        \A d \in wr[cc[s][k][i].win].deps :
            Leq(wr[d].vc, Newest(cc[s][KeyOf(d)]).vc)

\* "a join accepted a cut": the union of the branches' read sets of every
\* accepted join is a cut under the whole causal past.
AcceptedJoinsAreCuts == \A R \in joins : IsCut(R, "transitive")

\* "transactions read causal snapshots" (TCC, at the history level): every
\* committed workflow read one version per key, and none of the writes it read
\* has in its causal past a write of another key it read that is newer than
\* the version it read.  Batches are atomic through the batch's dependencies:
\* reading one write of a batch and an older version of another key the batch
\* wrote is a fracture.
TxnsReadCausalSnapshots ==
    \A t \in Txns : phase[t] = "done" => IsCut(ReadSet(t), "transitive")

-----------------------------------------------------------------------------
(* Witnesses against vacuity: configs that expect these to be violated show  *)
(* the behaviour is reachable.                                                *)

\* "a workflow aborts".
NotTxnAborted == \A t \in Txns : phase[t] /= "aborted"

\* "a committed workflow read another workflow's write".
NotRemoteRead == \A t \in Txns : phase[t] = "done" => \A x \in ReadSet(t) : IsInit(x)

=============================================================================
