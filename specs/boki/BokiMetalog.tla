----------------------------- MODULE BokiMetalog -----------------------------
(***************************************************************************)
(* Boki's metalog (Jia & Witchel, SOSP'21; ACM TOCS 2024): the ordering   *)
(* of one physical log by metalog entries, and its sealing when a term    *)
(* ends.  Written from the paper (section 4.3 "log append", 4.5           *)
(* "reconfiguration") and its digest; README.md beside this file maps     *)
(* each action to the paper and lists every choice.                        *)
(*                                                                         *)
(* Function nodes append records to their own shard (shard j's records   *)
(* carry local ids 0, 1, ...).  Every storage node of the term stores     *)
(* every shard: it receives a shard's records in order and reports its    *)
(* received prefix (its progress vector) to the primary sequencer.  The   *)
(* primary appends the element-wise minimum over the storage nodes (the   *)
(* records on every replica) as the next metalog entry, but only once the *)
(* previous entry is on a quorum of sequencers; backups copy entries in   *)
(* order; an entry on a quorum is propagated, and every subscriber (the   *)
(* engines of the shards and the storage nodes) applies the entries in    *)
(* order.  An engine completes an append when an entry covers it, with   *)
(* the seqnum the entry gives it: the term in the high bits, then the     *)
(* position (records before the entry, then by shard, then by local id).  *)
(*                                                                         *)
(* A failure (a crashed primary or storage node), or an administrator,    *)
(* starts a seal: sequencers freeze (a frozen backup rejects entries, a   *)
(* frozen primary issues none); once a quorum is frozen the controller    *)
(* takes the longest metalog copy of that quorum as the term's final     *)
(* metalog, every subscriber applies what it missed of it, appends it    *)
(* does not cover fail, and the next term starts with an empty metalog,   *)
(* a live primary and the live storage nodes.                             *)
(***************************************************************************)
EXTENDS Naturals, Sequences, FiniteSets, TLC

CONSTANTS
    NShards,      \* shards (one per function node): 1..NShards
    Storage,      \* storage nodes (model values)
    Sequencers,   \* sequencers (model values); the first primary is FirstPrimary
    FirstPrimary,
    MaxAppends,   \* appends per shard per term
    MaxTerm,      \* terms are 0..MaxTerm (at most MaxTerm seals)
    MaxCrashes,   \* node crashes per run (crash-stop)
    AdminSeals,   \* TRUE: a seal may also start with nothing failed
    Mutant        \* "none" is the protocol

Mutants == {"none", "order_before_durability", "seal_loses_entries", "new_term_reuses_seqnums"}

ASSUME NShards \in Nat /\ NShards >= 1
ASSUME FirstPrimary \in Sequencers
ASSUME MaxAppends \in Nat /\ MaxTerm \in Nat /\ MaxCrashes \in Nat
ASSUME AdminSeals \in BOOLEAN
ASSUME Mutant \in Mutants

Shards == 1..NShards
Engines == {<<"engine", j>> : j \in Shards}
Subscribers == Engines \cup {<<"storage", d>> : d \in Storage}
Quorum(Q) == 2 * Cardinality(Q) > Cardinality(Sequencers)
Zero == [j \in Shards |-> 0]

\* A seqnum: the term in the high bits (the position stays below TermBit).
TermBit == 100
SeqNum(t, pos) == IF Mutant = "new_term_reuses_seqnums" THEN pos ELSE t * TermBit + pos

VARIABLES
    term,        \* the installed term
    sealing,     \* the controller is sealing the term
    primary,     \* the term's primary sequencer
    replicas,    \* the term's storage nodes (each stores every shard)
    alive,       \* nodes that have not crashed (sequencers and storage nodes)
    crashes,     \* crashes so far
    appended,    \* appended[j]: appends issued by shard j's engine this term
    pending,     \* appends <<t, j, k>> issued and not yet completed
    stored,      \* stored[d][j]: shard j's contiguous prefix received by d this term
    reported,    \* reported[d][j]: the last progress of d the primary received
    mlog,        \* mlog[q]: sequencer q's copy of this term's metalog
    frozen,      \* sequencers that acknowledged the seal
    propagated,  \* entries the primary propagated (each on a quorum when sent)
    applied,     \* applied[s]: the entries subscriber s applied this term, in order
    \* What the run observed, for the properties:
    ordered,     \* <<t, j, k, seqnum>>: append completed with that seqnum
    failed,      \* <<t, j, k>>: append failed (its term ended without ordering it)
    finals,      \* finals[t + 1]: the final metalog of sealed term t
    pastApplied  \* pastApplied[s][t + 1]: what s had applied of term t when it was sealed

vars == <<term, sealing, primary, replicas, alive, crashes, appended, pending, stored, reported,
          mlog, frozen, propagated, applied, ordered, failed, finals, pastApplied>>

-----------------------------------------------------------------------------
(* Arithmetic on cuts (progress vectors over the shards).                  *)

RECURSIVE SumTo(_, _)
SumTo(f, n) == IF n = 0 THEN 0 ELSE f[n] + SumTo(f, n - 1)

Min(S) == CHOOSE x \in S : \A y \in S : x <= y
Max(S) == CHOOSE x \in S : \A y \in S : x >= y

LastCut(log) == IF log = <<>> THEN Zero ELSE log[Len(log)].end

\* Position of record k of shard j in entry e (which covers it): the records ordered before e,
\* then e's records of the shards before j, then j's records before k.
Pos(e, j, k) ==
    SumTo(e.start, NShards) + SumTo([i \in Shards |-> e.end[i] - e.start[i]], j - 1) + (k - e.start[j])

\* The longest prefix of the primary's metalog held by a quorum (backups copy in order).
QuorumLen ==
    Max({n \in 0..Len(mlog[primary]) : Quorum({q \in Sequencers : Len(mlog[q]) >= n})})

IsPrefix(a, b) == Len(a) <= Len(b) /\ SubSeq(b, 1, Len(a)) = a

\* The appends of shard j that entry e orders.
Covered(e, j) == e.start[j]..(e.end[j] - 1)

\* Engine j applies entry e of term t: the appends e covers complete with their seqnums.
Completions(t, e, j) == {<<t, j, k, SeqNum(t, Pos(e, j, k))>> : k \in Covered(e, j)}

-----------------------------------------------------------------------------
Init ==
    /\ term = 0
    /\ sealing = FALSE
    /\ primary = FirstPrimary
    /\ replicas = Storage
    /\ alive = Storage \cup Sequencers
    /\ crashes = 0
    /\ appended = Zero
    /\ pending = {}
    /\ stored = [d \in Storage |-> Zero]
    /\ reported = [d \in Storage |-> Zero]
    /\ mlog = [q \in Sequencers |-> <<>>]
    /\ frozen = {}
    /\ propagated = 0
    /\ applied = [s \in Subscribers |-> <<>>]
    /\ ordered = {}
    /\ failed = {}
    /\ finals = <<>>
    /\ pastApplied = [s \in Subscribers |-> <<>>]

\* logAppend on shard j's engine: a new local id, sent to every storage replica.  Appends are
\* refused while the term is being sealed (the engine's view is inactive).
LogAppend(j) ==
    /\ ~sealing
    /\ appended[j] < MaxAppends
    /\ appended' = [appended EXCEPT ![j] = @ + 1]
    /\ pending' = pending \cup {<<term, j, appended[j]>>}
    /\ UNCHANGED <<term, sealing, primary, replicas, alive, crashes, stored, reported, mlog, frozen,
                   propagated, applied, ordered, failed, finals, pastApplied>>

\* Storage node d receives shard j's next record (links are FIFO and reliable).
Store(d, j) ==
    /\ d \in replicas \cap alive
    /\ stored[d][j] < appended[j]
    /\ stored' = [stored EXCEPT ![d][j] = @ + 1]
    /\ UNCHANGED <<term, sealing, primary, replicas, alive, crashes, appended, pending, reported, mlog,
                   frozen, propagated, applied, ordered, failed, finals, pastApplied>>

\* d's progress report reaches the primary.
Report(d) ==
    /\ d \in replicas \cap alive
    /\ reported[d] # stored[d]
    /\ reported' = [reported EXCEPT ![d] = stored[d]]
    /\ UNCHANGED <<term, sealing, primary, replicas, alive, crashes, appended, pending, stored, mlog,
                   frozen, propagated, applied, ordered, failed, finals, pastApplied>>

\* The cut the primary may order: per shard, the least progress over the replicas (the records
\* on all of them); the mutant takes the most advanced replica.
DurableCut ==
    [j \in Shards |->
        IF Mutant = "order_before_durability"
        THEN Max({reported[d][j] : d \in replicas})
        ELSE Min({reported[d][j] : d \in replicas})]

\* The primary appends the next entry: only while the previous one is on a quorum, only if some
\* shard advanced, never once frozen.
Cut ==
    LET last == LastCut(mlog[primary])
        next == [j \in Shards |-> Max({DurableCut[j], last[j]})]
    IN /\ primary \in alive \ frozen
       /\ Len(mlog[primary]) = QuorumLen
       /\ next # last
       /\ mlog' = [mlog EXCEPT ![primary] = Append(@, [start |-> last, end |-> next])]
       /\ UNCHANGED <<term, sealing, primary, replicas, alive, crashes, appended, pending, stored, reported,
                      frozen, propagated, applied, ordered, failed, finals, pastApplied>>

\* Backup b copies the primary's next entry (sent before any crash of the primary); a frozen
\* backup rejects it.
Replicate(b) ==
    /\ b # primary
    /\ b \in alive \ frozen
    /\ Len(mlog[b]) < Len(mlog[primary])
    /\ mlog' = [mlog EXCEPT ![b] = Append(@, mlog[primary][Len(mlog[b]) + 1])]
    /\ UNCHANGED <<term, sealing, primary, replicas, alive, crashes, appended, pending, stored, reported,
                   frozen, propagated, applied, ordered, failed, finals, pastApplied>>

\* The primary propagates the entries a quorum holds.
Propagate ==
    /\ primary \in alive
    /\ propagated < QuorumLen
    /\ propagated' = QuorumLen
    /\ UNCHANGED <<term, sealing, primary, replicas, alive, crashes, appended, pending, stored, reported,
                   mlog, frozen, applied, ordered, failed, finals, pastApplied>>

\* Subscriber s applies the next propagated entry; an engine completes the appends it covers.
ApplyEntry(s) ==
    LET e == mlog[primary][Len(applied[s]) + 1]
        done == IF s \in Engines THEN Completions(term, e, s[2]) ELSE {}
    IN /\ s[1] = "engine" \/ s[2] \in alive
       /\ Len(applied[s]) < propagated
       /\ applied' = [applied EXCEPT ![s] = Append(@, e)]
       /\ ordered' = ordered \cup done
       /\ pending' = pending \ {<<r[1], r[2], r[3]>> : r \in done}
       /\ UNCHANGED <<term, sealing, primary, replicas, alive, crashes, appended, stored, reported, mlog,
                      frozen, propagated, failed, finals, pastApplied>>

\* A sequencer or storage node crashes (crash-stop; engines are outside this spec), in a term
\* that a seal can still end (a failure in the last term would stall it forever).
Crash(n) ==
    /\ crashes < MaxCrashes
    /\ term < MaxTerm
    /\ n \in alive
    /\ alive' = alive \ {n}
    /\ crashes' = crashes + 1
    /\ UNCHANGED <<term, sealing, primary, replicas, appended, pending, stored, reported, mlog, frozen,
                   propagated, applied, ordered, failed, finals, pastApplied>>

\* The controller starts a seal: on a failure it detected, or (AdminSeals) for any reason.
Failed == primary \notin alive \/ replicas \ alive # {}
StartSeal ==
    /\ ~sealing
    /\ term < MaxTerm
    /\ Failed \/ AdminSeals
    /\ sealing' = TRUE
    /\ UNCHANGED <<term, primary, replicas, alive, crashes, appended, pending, stored, reported, mlog,
                   frozen, propagated, applied, ordered, failed, finals, pastApplied>>

Freeze(q) ==
    /\ sealing
    /\ q \in alive \ frozen
    /\ frozen' = frozen \cup {q}
    /\ UNCHANGED <<term, sealing, primary, replicas, alive, crashes, appended, pending, stored, reported,
                   mlog, propagated, applied, ordered, failed, finals, pastApplied>>

\* The final metalog of a sealing quorum Q: its longest copy (the mutant: its shortest).
FinalOf(Q) ==
    LET lens == {Len(mlog[q]) : q \in Q}
        n == IF Mutant = "seal_loses_entries" THEN Min(lens) ELSE Max(lens)
    IN mlog[CHOOSE q \in Q : Len(mlog[q]) = n]

\* Once a quorum Q of live sequencers is frozen: every engine applies what it missed of the final
\* metalog (completing the appends it covers), the appends it does not cover fail, and the next
\* term is installed with primary p and the live storage nodes.
Install(Q, p) ==
    LET final == FinalOf(Q)
        missed(j) == SubSeq(final, Len(applied[<<"engine", j>>]) + 1, Len(final))
        done == UNION {UNION {Completions(term, missed(j)[i], j) : i \in DOMAIN missed(j)} : j \in Shards}
    IN /\ sealing
       /\ Q \subseteq frozen \cap alive
       /\ Quorum(Q)
       /\ p \in alive \cap Sequencers
       /\ replicas \cap alive # {}
       /\ finals' = Append(finals, final)
       /\ pastApplied' = [s \in Subscribers |-> Append(pastApplied[s], applied[s])]
       /\ ordered' = ordered \cup done
       \* Storage nodes discard the records the final metalog does not cover: those appends
       \* failed, whatever an engine reported.
       /\ failed' = failed \cup UNION {{<<term, j, k>> : k \in LastCut(final)[j]..(appended[j] - 1)} : j \in Shards}
       /\ pending' = {}
       /\ term' = term + 1
       /\ sealing' = FALSE
       /\ primary' = p
       /\ replicas' = replicas \cap alive
       /\ appended' = Zero
       /\ stored' = [d \in Storage |-> Zero]
       /\ reported' = [d \in Storage |-> Zero]
       /\ mlog' = [q \in Sequencers |-> <<>>]
       /\ frozen' = {}
       /\ propagated' = 0
       /\ applied' = [s \in Subscribers |-> <<>>]
       /\ UNCHANGED <<alive, crashes>>

Next ==
    \/ \E j \in Shards : LogAppend(j)
    \/ \E d \in Storage, j \in Shards : Store(d, j)
    \/ \E d \in Storage : Report(d)
    \/ Cut
    \/ \E b \in Sequencers : Replicate(b)
    \/ Propagate
    \/ \E s \in Subscribers : ApplyEntry(s)
    \/ \E n \in Storage \cup Sequencers : Crash(n)
    \/ StartSeal
    \/ \E q \in Sequencers : Freeze(q)
    \/ \E Q \in SUBSET Sequencers, p \in Sequencers : Install(Q, p)

\* Every step the protocol takes on its own is weakly fair; appends, crashes and an
\* administrator's seal are not (they may never happen).
FailureSeal == Failed /\ StartSeal
Fairness ==
    /\ \A d \in Storage, j \in Shards : WF_vars(Store(d, j))
    /\ \A d \in Storage : WF_vars(Report(d))
    /\ WF_vars(Cut)
    /\ \A b \in Sequencers : WF_vars(Replicate(b))
    /\ WF_vars(Propagate)
    /\ \A s \in Subscribers : WF_vars(ApplyEntry(s))
    /\ WF_vars(FailureSeal)
    /\ \A q \in Sequencers : WF_vars(Freeze(q))
    /\ WF_vars(\E Q \in SUBSET Sequencers, p \in Sequencers : Install(Q, p))

Spec == Init /\ [][Next]_vars
FairSpec == Spec /\ Fairness

-----------------------------------------------------------------------------
(* Properties (digest section 4.2).                                         *)

TypeOK ==
    /\ term \in 0..MaxTerm
    /\ appended \in [Shards -> 0..MaxAppends]
    /\ \A d \in Storage : \A j \in Shards : reported[d][j] <= stored[d][j] /\ stored[d][j] <= appended[j]

\* Metalog prefix agreement: every backup's copy and every subscriber's applied entries are
\* prefixes of the primary's metalog (so any two are prefixes of one another).
PrefixAgreement ==
    /\ \A q \in Sequencers : IsPrefix(mlog[q], mlog[primary])
    /\ \A s \in Subscribers : IsPrefix(applied[s], mlog[primary])

\* Cuts only grow and chain: each entry starts where the previous one ended.
CutsChain ==
    \A i \in DOMAIN mlog[primary] :
        /\ mlog[primary][i].start = IF i = 1 THEN Zero ELSE mlog[primary][i - 1].end
        /\ \A j \in Shards : mlog[primary][i].start[j] <= mlog[primary][i].end[j]

\* Durability before order: every record an entry orders is on every replica of the term.
DurabilityBeforeOrder ==
    \A i \in DOMAIN mlog[primary], j \in Shards, d \in replicas : mlog[primary][i].end[j] <= stored[d][j]

\* Quorum before visibility: no subscriber applied an entry a quorum does not hold.
QuorumBeforeVisibility == \A s \in Subscribers : Len(applied[s]) <= QuorumLen

\* Seal safety: the final metalog of every sealed term holds every entry any subscriber applied
\* in it; an append is ordered in exactly one way or failed, never both.
OneOutcome == \A r \in ordered : <<r[1], r[2], r[3]>> \notin failed
SealSafety ==
    /\ \A s \in Subscribers, t \in DOMAIN finals : IsPrefix(pastApplied[s][t], finals[t])
    /\ OneOutcome

\* Total order: no two records share a seqnum, and a record has one seqnum.
UniqueSeqnums ==
    \A r1, r2 \in ordered : (r1[4] = r2[4]) <=> (<<r1[1], r1[2], r1[3]>> = <<r2[1], r2[2], r2[3]>>)

\* Term order: every seqnum of a later term is above every seqnum of an earlier one.
TermOrder == \A r1, r2 \in ordered : r1[1] < r2[1] => r1[4] < r2[4]

\* Eventual completion (liveness, under FairSpec): every append is eventually ordered or failed.
AppendsComplete == \A t \in 0..MaxTerm, j \in Shards, k \in 0..(MaxAppends - 1) :
    (<<t, j, k>> \in pending) ~> (<<t, j, k>> \notin pending)

\* Sequencers and storage nodes are interchangeable apart from the first primary; used only for
\* safety checking (symmetry is unsound for liveness).
Symmetry == Permutations(Storage)
=============================================================================
