------------------------------- MODULE Concord -------------------------------
(***************************************************************************)
(* Concord (Stojkovic et al., "Rethinking Distributed Coherence for        *)
(* Software Caches in Serverless Environments"): directory-based ESI       *)
(* coherence for per-application function caches, write-through to        *)
(* storage.  Written from the paper (sections III-C2, III-D, III-F,         *)
(* III-H), not from causim's Rust model; README.md next to this file maps  *)
(* each action to the paper and lists the choices.                          *)
(*                                                                         *)
(*   - Cache agents 1..N, one per machine, each caching lines E, S or I    *)
(*     (clean: caches are write-through).  Each key's home is the first   *)
(*     member of the ring at or after the key's position; it keeps the     *)
(*     key's directory entry: sharers, or one owner.                       *)
(*   - The six coherence operations, with silent evictions.  An E owner    *)
(*     writes storage directly and "does not accept external requests for *)
(*     the data item until the storage acknowledges"; a home invalidates   *)
(*     an E owner before writing storage, S sharers in parallel with it.   *)
(*   - The home handles one transaction per key at a time (the blocking   *)
(*     directory); requests that find the key busy wait in a queue.        *)
(*   - At most one agent crashes.  After detection every survivor (and     *)
(*     storage) fences it; survivors evict the lines it homed, drop it     *)
(*     from their entries, cancel their writes to it and hold their reads; *)
(*     when all have done so the ring without it is in force, homes treat  *)
(*     its missing answers as received, and held reads are reissued.       *)
(*   - At most one agent leaves the domain (section III-D), when none of   *)
(*     its functions has a call in flight: it drops its lines and holds    *)
(*     new requests, finishes its directory transactions, synchronizes     *)
(*     with every other agent (the first barrier: all switch to the ring   *)
(*     without it and drop it from their entries), sends its entries to   *)
(*     its clockwise successor with the held requests, and once the       *)
(*     successor acknowledges, the agents synchronize again.               *)
(*   - Links are reliable and FIFO per pair (gRPC over TCP); storage is    *)
(*     a linearizable register per key.                                     *)
(*                                                                         *)
(* Functions (Clients) run fixed plans of reads and writes at their        *)
(* machine's agent, one call at a time; every interleaving is explored.    *)
(* A history of invocations and responses records what they observe.       *)
(***************************************************************************)
EXTENDS Naturals, Sequences, FiniteSets, TLC

CONSTANTS
    N,             \* cache agents 1..N, in ring order
    Keys,          \* keys (model values)
    KeyPos,        \* KeyPos[k] \in 1..N: the key's position on the ring
    Clients,       \* functions (model values)
    ClientNode,    \* ClientNode[c]: the machine (agent) c runs on; DB: an external application's
                   \* function, whose writes go to storage directly (section III-C3)
    Plan,          \* Plan[c]: its calls, [op |-> "R" or "W", key |-> k, val |-> v]
    CrashNodes,    \* agents that may crash (at most one crash per run)
    LeaveNodes,    \* agents that may leave the domain (at most one departure, no crash then)
    Evictions,     \* TRUE: idle lines may be evicted (silently) at any time
    DirEvictions,  \* TRUE: a home may evict an idle directory entry at any time
    Literal,       \* the paper-literal rules in force (the rest are strict)
    Mutant         \* "none", or a named bug of the Rust model

\* Paper-literal rules, each a place where the strict rule differs:
\*   upgrade_local_first  a write to an S line updates the local copy at once
\*                        (Fig. 5b step 1), before the home serializes it;
\*   owner_read_in_flight a read at the owner's machine sees the owner's
\*                        direct write before storage acknowledges it;
\*   dir_evict_no_recall  a home evicts a directory entry without first
\*                        invalidating the copies it tracks;
\*   external_at_storage  storage applies an external write at once and its
\*                        listener tells the key's home, which then invalidates
\*                        the copies (strictly, external_through_home: the home
\*                        writes it like any write, invalidations first).
LiteralRules == {"upgrade_local_first", "owner_read_in_flight", "dir_evict_no_recall", "external_at_storage"}
Mutants == {"none", "no_owner_deferral", "inv_parallel_with_put", "non_blocking_directory",
            "no_failure_eviction", "no_storage_fencing",
            "leave_without_migration", "serve_before_entries"}

ASSUME N \in Nat /\ N >= 1
ASSUME Literal \subseteq LiteralRules
ASSUME Mutant \in Mutants
ASSUME \A c \in Clients : ClientNode[c] \in 0..N
\* One external function at most, writes only, in runs without a crash or a departure.
ExtClients == {c \in Clients : ClientNode[c] = 0}
ASSUME Cardinality(ExtClients) <= 1
ASSUME \A c \in ExtClients : \A i \in 1..Len(Plan[c]) : Plan[c][i].op = "W"
ASSUME ExtClients # {} => CrashNodes = {} /\ LeaveNodes = {}
ASSUME \A k \in Keys : KeyPos[k] \in 1..N

Nodes == 1..N
DB == 0            \* storage, an endpoint like the agents
CTL == N + 1       \* the controller: external writes reach homes through it
Ends == 0..N + 1
NoNode == 0        \* no failed agent (storage never fails)
InitVal == 0
Inf == 1000

VARIABLES
    line,      \* line[n][k]   : [st |-> "I"/"S"/"E", val |-> v] at agent n
    cpend,     \* cpend[n][k]  : the cache-side transaction in flight (or None)
    dir,       \* dir[h][k]    : [st |-> "none"/"S"/"E", sh |-> holders] at home h
    act,       \* act[h][k]    : the home's transactions in flight for k (a set)
    queue,     \* queue[h][k]  : requests waiting for the entry (blocking directory)
    chan,      \* chan[<<a, b>>] : messages from a to b, in order
    store,     \* store[k]     : storage's value
    alive,     \* agents that have not crashed
    members,   \* the ring in force
    failed,    \* the crashed agent, or NoNode
    phase,     \* "none", "crashed" (not detected yet), "recovering", "done"
    recovered, \* endpoints (agents, and DB for storage) that handled the failure
    leaver,    \* the departing agent, or NoNode
    lphase,    \* "none", "draining", "moving" (barrier 1 passed), "sent", "installed",
               \* "acked", "done" (barrier 2 passed)
    wseq,      \* ghost: wseq[k], writes to k sent to storage so far (their order)
    stseq,     \* ghost: stseq[k], the order number of the write storage applied last
    reordered, \* ghost: storage applied a write after a later-serialized one (I8)
    pc,        \* pc[c]        : calls c has issued
    waiting,   \* waiting[c]   : c waits for its call's answer
    stopped,   \* stopped[c]   : c's machine crashed, or its write failed with its home
    hist,      \* hist[c]      : c's calls [kind, key, val, inv, ret] (ret 0: pending)
    clock      \* logical time of the history's events

vars == <<line, cpend, dir, act, queue, chan, store, alive, members, failed, phase,
          recovered, leaver, lphase, wseq, stseq, reordered, pc, waiting, stopped, hist, clock>>
cacheVars == <<line, cpend>>
homeVars == <<dir, act, queue>>
failVars == <<alive, members, failed, phase, recovered, leaver, lphase>>
ghostVars == <<wseq, stseq, reordered>>
clientVars == <<pc, waiting, stopped, hist, clock>>

None == [kind |-> "none", c |-> "none", v |-> 0, reissue |-> FALSE]
NoDir == [st |-> "none", sh |-> {}]
LineI == [st |-> "I", val |-> InitVal]
Valid(l) == l.st # "I"

Succ(i) == IF i = N THEN 1 ELSE i + 1
RECURSIVE HomeFrom(_, _, _)
HomeFrom(i, S, n) == IF i \in S \/ n = 0 THEN i ELSE HomeFrom(Succ(i), S, n - 1)
\* Consistent hashing, one token per agent: the first member clockwise.
Home(k) == HomeFrom(KeyPos[k], members, N)
\* The home before the departure (the leaver still in the ring).
OldHome(k) == HomeFrom(KeyPos[k], (members \cup {leaver}) \ {NoNode}, N)

\* The departing agent holds every request from its announcement on (it hands
\* them to its successor after its entries); the successor holds those for the
\* moved keys until their entries arrive (unless the mutant).
Holds(h, k) ==
    \/ h = leaver
    \/ /\ lphase \in {"moving", "sent"} /\ OldHome(k) = leaver /\ h = Home(k)
       /\ Mutant # "serve_before_entries"

\* The agent whose entry tracks k's copies: the departing agent until its
\* successor has installed the entries it sent.
Holder(k) == IF lphase \in {"moving", "sent"} /\ OldHome(k) = leaver THEN leaver ELSE Home(k)

\* The departing agent's clockwise successor, the new home of all its keys.
Successor == HomeFrom(Succ(leaver), members, N)

\* Entry e without agent x.
DropSharer(e, x) == LET sh == e.sh \ {x} IN IF sh = {} THEN NoDir ELSE [e EXCEPT !.sh = sh]

\* The failed agent's messages to p are dropped once p handled the failure.
Fenced(p) == failed # NoNode /\ p \in recovered
StorageFences == Fenced(DB) /\ Mutant # "no_storage_fencing"

-----------------------------------------------------------------------------
(* Channels.                                                                *)

\* Appends each message of msgs (a set of <<<<from, to>>, m>>, at most one per
\* link) to its link.
Send(ch, msgs) ==
    [p \in DOMAIN ch |-> IF \E x \in msgs : x[1] = p
                         THEN Append(ch[p], (CHOOSE x \in msgs : x[1] = p)[2])
                         ELSE ch[p]]
Recv(ch, p) == [ch EXCEPT ![p] = Tail(@)]
Has(a, b) == chan[<<a, b>>] # <<>>
Msg(a, b) == Head(chan[<<a, b>>])

Req(t, k, v) == [t |-> t, k |-> k, v |-> v, q |-> 0, own |-> FALSE, seq |-> 0]
Rep(t, k, v, q) == [t |-> t, k |-> k, v |-> v, q |-> q, own |-> FALSE, seq |-> 0]

-----------------------------------------------------------------------------
(* The history.                                                             *)

Invoke(c, kind, k, v) ==
    /\ hist' = [hist EXCEPT ![c] = Append(@, [kind |-> kind, key |-> k, val |-> v, inv |-> clock + 1, ret |-> 0])]
    /\ clock' = clock + 1
    /\ pc' = [pc EXCEPT ![c] = @ + 1]

\* c's call returns (with v, for a read).
Respond(c, v) ==
    LET i == Len(hist[c])
    IN  /\ hist' = [hist EXCEPT ![c][i].ret = clock + 1,
                                ![c][i].val = IF hist[c][i].kind = "R" THEN v ELSE @]
        /\ clock' = clock + 1
        /\ waiting' = [waiting EXCEPT ![c] = FALSE]
        /\ UNCHANGED <<pc, stopped>>

-----------------------------------------------------------------------------
(* The home's directory transactions.  A transaction record:                *)
(*   kind "F"   reading storage for q (in E: excl, or joining the sharers)  *)
(*        "Fwd" asking the owner o for the data                             *)
(*        "W"   writing v for q: acks awaited, put sent, stored             *)
(*        "C"   recalling the entry before evicting it: acks awaited        *)

Txn(q, kind, excl, o, v, acks, put) ==
    [q |-> q, kind |-> kind, excl |-> excl, o |-> o, v |-> v, acks |-> acks, put |-> put, stored |-> FALSE]

\* Home h starts request r (kind "R" or "W" from r.q) for key k, given the
\* links ch after its reception.
Begin(h, k, r, ch) ==
    LET d == dir[h][k]
        q == r.q
        add(t) == act' = [act EXCEPT ![h][k] = @ \cup {t}]
        put(v) == <<<<h, DB>>, [t |-> "StPut", k |-> k, v |-> v, q |-> q, own |-> FALSE, seq |-> wseq[k] + 1]>>
        get == <<<<h, DB>>, Rep("StGet", k, 0, q)>>
        invs(S) == {<<<<h, s>>, Req("Inv", k, 0)>> : s \in S}
        countPut == wseq' = [wseq EXCEPT ![k] = @ + 1]
    IN
    CASE r.kind = "X" /\ d.sh = {} ->
            \* an external write already in storage, no copy to invalidate
            chan' = ch /\ UNCHANGED <<dir, act, wseq>>
      [] r.kind = "X" ->
            \* an external write already in storage: invalidate every copy
            /\ add([Txn(q, "X", FALSE, 0, r.v, d.sh, TRUE) EXCEPT !.stored = TRUE])
            /\ chan' = Send(ch, invs(d.sh))
            /\ UNCHANGED <<dir, wseq>>
      [] r.kind = "R" /\ (d.st = "none" \/ (d.st = "E" /\ d.sh = {q})) ->
            \* read miss (or the owner re-reading a line it evicted): storage, then E
            /\ add(Txn(q, "F", TRUE, 0, 0, {}, FALSE)) /\ chan' = Send(ch, {get})
            /\ UNCHANGED <<dir, wseq>>
      [] r.kind = "R" /\ d.st = "S" /\ Valid(line[h][k]) ->
            \* remote read hit served from the home's own copy
            /\ dir' = [dir EXCEPT ![h][k] = [st |-> "S", sh |-> d.sh \cup {q}]]
            /\ chan' = Send(ch, {<<<<h, q>>, [t |-> "Data", k |-> k, v |-> line[h][k].val, q |-> 0, own |-> FALSE, seq |-> 0]>>})
            /\ UNCHANGED <<act, wseq>>
      [] r.kind = "R" /\ d.st = "S" ->
            /\ add(Txn(q, "F", FALSE, 0, 0, {}, FALSE)) /\ chan' = Send(ch, {get})
            /\ UNCHANGED <<dir, wseq>>
      [] r.kind = "R" /\ d.st = "E" ->
            \* remote read hit at an owner: forward, the data comes back through the home
            LET o == CHOOSE o \in d.sh : TRUE
            IN  /\ add(Txn(q, "Fwd", FALSE, o, 0, {}, FALSE))
                /\ chan' = Send(ch, {<<<<h, o>>, Req("FwdRd", k, 0)>>})
                /\ UNCHANGED <<dir, wseq>>
      [] r.kind = "W" /\ (d.st = "none" \/ (d.st = "E" /\ d.sh = {q})) ->
            \* write miss: storage, then E
            /\ add(Txn(q, "W", FALSE, 0, r.v, {}, TRUE)) /\ chan' = Send(ch, {put(r.v)}) /\ countPut
            /\ UNCHANGED dir
      [] r.kind = "W" /\ d.st = "S" ->
            \* invalidations in parallel with the storage write
            /\ add(Txn(q, "W", FALSE, 0, r.v, d.sh \ {q}, TRUE))
            /\ chan' = Send(ch, invs(d.sh \ {q}) \cup {put(r.v)}) /\ countPut
            /\ UNCHANGED dir
      [] r.kind = "W" /\ d.st = "E" ->
            \* the owner first, then storage (the mutant: in parallel)
            IF Mutant = "inv_parallel_with_put"
            THEN /\ add(Txn(q, "W", FALSE, 0, r.v, d.sh, TRUE))
                 /\ chan' = Send(ch, invs(d.sh) \cup {put(r.v)}) /\ countPut
                 /\ UNCHANGED dir
            ELSE /\ add(Txn(q, "W", FALSE, 0, r.v, d.sh, FALSE))
                 /\ chan' = Send(ch, invs(d.sh))
                 /\ UNCHANGED <<dir, wseq>>

\* The entry after transaction t ends (with the data read, for reads); a
\* requester that failed meanwhile (fenced here) is not recorded.
DirAfter(h, k, t) ==
    LET d == dir[h][k]
        gone == Fenced(h) /\ t.q = failed
        others == IF d.st = "S" THEN d.sh ELSE {}
        S(sh) == IF sh = {} THEN NoDir ELSE [st |-> "S", sh |-> sh]
    IN  CASE t.kind \in {"C", "X"} \/ t.q = CTL -> NoDir
          [] t.kind = "Fwd" -> S({t.o} \cup (IF gone THEN {} ELSE {t.q}))
          [] t.kind = "F" /\ ~t.excl -> S(others \cup (IF gone THEN {} ELSE {t.q}))
          [] OTHER -> IF gone THEN NoDir ELSE [st |-> "E", sh |-> {t.q}]

\* Home h ends transaction t of key k: the entry, and the answer to the
\* requester (data v for reads).
Finish(h, k, t, v, ch) ==
    /\ act' = [act EXCEPT ![h][k] = @ \ {t}]
    /\ dir' = [dir EXCEPT ![h][k] = DirAfter(h, k, t)]
    /\ chan' = CASE t.kind \in {"C", "X"} -> ch
                 [] t.kind = "W" -> Send(ch, {<<<<h, t.q>>, Req(IF t.q = CTL THEN "ExtAck" ELSE "WrAck", k, t.v)>>})
                 [] OTHER -> Send(ch, {<<<<h, t.q>>, [t |-> "Data", k |-> k, v |-> v, q |-> 0,
                                                      own |-> t.kind = "F" /\ t.excl, seq |-> 0]>>})

\* Write or recall transaction t (as act holds it) now waits for no acks (u):
\* storage next (E case), or done once storage acknowledged too.
AfterAcks(h, k, t, u, ch) ==
    IF ~u.put
    THEN /\ act' = [act EXCEPT ![h][k] = (@ \ {t}) \cup {[u EXCEPT !.put = TRUE]}]
         /\ chan' = Send(ch, {<<<<h, DB>>, [t |-> "StPut", k |-> k, v |-> u.v, q |-> u.q, own |-> FALSE, seq |-> wseq[k] + 1]>>})
         /\ wseq' = [wseq EXCEPT ![k] = @ + 1]
         /\ UNCHANGED dir
    ELSE IF u.stored \/ u.kind = "C"
         THEN Finish(h, k, t, 0, ch) /\ UNCHANGED wseq
         ELSE /\ act' = [act EXCEPT ![h][k] = (@ \ {t}) \cup {u}]
              /\ chan' = ch
              /\ UNCHANGED <<dir, wseq>>

Blocking == Mutant # "non_blocking_directory"

(* A request reaches home h: it starts, or waits for the key's transaction *)
(* in flight (the blocking directory).                                       *)
HomeRecv(q, h) ==
    /\ h \in alive /\ Has(q, h) /\ ~(Fenced(h) /\ q = failed)
    /\ Msg(q, h).t \in {"RdReq", "WrReq", "ExtReq"}
    /\ LET m == Msg(q, h)
           kind == CASE m.t = "RdReq" -> "R"
                     [] m.t = "ExtReq" /\ "external_at_storage" \in Literal -> "X"
                     [] OTHER -> "W"
           \* a request handed on by a departing home names its requester
           r == [q |-> IF m.q # 0 THEN m.q ELSE q, kind |-> kind, v |-> m.v]
       IN  IF (Blocking /\ (act[h][m.k] # {} \/ queue[h][m.k] # <<>>)) \/ Holds(h, m.k)
           THEN /\ queue' = [queue EXCEPT ![h][m.k] = Append(@, r)]
                /\ chan' = Recv(chan, <<q, h>>)
                /\ UNCHANGED <<dir, act, wseq>>
           ELSE Begin(h, m.k, r, Recv(chan, <<q, h>>)) /\ UNCHANGED queue
    /\ UNCHANGED <<cacheVars, store, failVars, stseq, reordered, clientVars>>

HomeDequeue(h, k) ==
    /\ h \in alive /\ act[h][k] = {} /\ queue[h][k] # <<>> /\ ~Holds(h, k)
    /\ Begin(h, k, Head(queue[h][k]), chan)
    /\ queue' = [queue EXCEPT ![h][k] = Tail(@)]
    /\ UNCHANGED <<cacheVars, store, failVars, stseq, reordered, clientVars>>

HomeStData(h) ==
    /\ h \in alive /\ Has(DB, h) /\ Msg(DB, h).t = "StData"
    /\ LET m == Msg(DB, h)
       IN  \E t \in act[h][m.k] : t.kind = "F" /\ t.q = m.q /\ Finish(h, m.k, t, m.v, Recv(chan, <<DB, h>>))
    /\ UNCHANGED <<cacheVars, queue, store, failVars, ghostVars, clientVars>>

HomeStAck(h) ==
    /\ h \in alive /\ Has(DB, h) /\ Msg(DB, h).t = "StAck" /\ ~Msg(DB, h).own
    /\ LET m == Msg(DB, h)
       IN  \E t \in act[h][m.k] :
             /\ t.kind = "W" /\ t.q = m.q /\ t.put /\ ~t.stored
             /\ LET u == [t EXCEPT !.stored = TRUE]
                IN  IF u.acks = {}
                    THEN Finish(h, m.k, t, 0, Recv(chan, <<DB, h>>))
                    ELSE /\ act' = [act EXCEPT ![h][m.k] = (@ \ {t}) \cup {u}]
                         /\ chan' = Recv(chan, <<DB, h>>)
                         /\ UNCHANGED dir
    /\ UNCHANGED <<cacheVars, queue, store, failVars, ghostVars, clientVars>>

HomeInvAck(n, h) ==
    /\ h \in alive /\ Has(n, h) /\ Msg(n, h).t = "InvAck" /\ ~(Fenced(h) /\ n = failed)
    /\ LET m == Msg(n, h)
           ch == Recv(chan, <<n, h>>)
       IN  IF \E t \in act[h][m.k] : n \in t.acks
           THEN \E t \in act[h][m.k] :
                  /\ n \in t.acks
                  /\ LET u == [t EXCEPT !.acks = @ \ {n}]
                     IN  IF u.acks = {}
                         THEN AfterAcks(h, m.k, t, u, ch)
                         ELSE /\ act' = [act EXCEPT ![h][m.k] = (@ \ {t}) \cup {u}]
                              /\ chan' = ch
                              /\ UNCHANGED <<dir, wseq>>
           ELSE chan' = ch /\ UNCHANGED <<dir, act, wseq>>
    /\ UNCHANGED <<cacheVars, queue, store, failVars, stseq, reordered, clientVars>>

HomeFwdData(o, h) ==
    /\ h \in alive /\ Has(o, h) /\ Msg(o, h).t \in {"FwdData", "FwdNack"} /\ ~(Fenced(h) /\ o = failed)
    /\ LET m == Msg(o, h)
           ch == Recv(chan, <<o, h>>)
       IN  \E t \in act[h][m.k] :
             /\ t.kind = "Fwd" /\ t.o = o
             /\ IF m.t = "FwdData"
                THEN Finish(h, m.k, t, m.v, ch)
                ELSE \* the owner evicted the line: storage, then E for the requester
                     /\ act' = [act EXCEPT ![h][m.k] = (@ \ {t}) \cup {Txn(t.q, "F", TRUE, 0, 0, {}, FALSE)}]
                     /\ chan' = Send(ch, {<<<<h, DB>>, Rep("StGet", m.k, 0, t.q)>>})
                     /\ UNCHANGED dir
    /\ UNCHANGED <<cacheVars, queue, store, failVars, ghostVars, clientVars>>

(* A home evicts an idle directory entry (cache shrink, section III-E):      *)
(* strictly it recalls the copies first; paper-literal it just drops it.     *)
DirEvict(h, k) ==
    /\ DirEvictions /\ h \in alive /\ Home(k) = h /\ ~Holds(h, k)
    /\ dir[h][k] # NoDir /\ act[h][k] = {} /\ queue[h][k] = <<>>
    /\ IF "dir_evict_no_recall" \in Literal
       THEN dir' = [dir EXCEPT ![h][k] = NoDir] /\ UNCHANGED <<act, chan>>
       ELSE /\ act' = [act EXCEPT ![h][k] = {Txn(h, "C", FALSE, 0, 0, dir[h][k].sh, TRUE)}]
            /\ chan' = Send(chan, {<<<<h, s>>, Req("Inv", k, 0)>> : s \in dir[h][k].sh})
            /\ UNCHANGED dir
    /\ UNCHANGED <<cacheVars, queue, store, failVars, ghostVars, clientVars>>

-----------------------------------------------------------------------------
(* The cache side: the functions' calls and the answers.                    *)

Ready(c) ==
    /\ ~waiting[c] /\ ~stopped[c] /\ pc[c] < Len(Plan[c]) /\ ClientNode[c] \in alive
    /\ ClientNode[c] # leaver

\* The requester knows k's home: not while it recovers from the failure of
\* k's home (the new home is in force only at the end of recovery).
HomeKnown(n, k) == ~(phase = "recovering" /\ n \in recovered /\ Home(k) = failed)

Op(c) == Plan[c][pc[c] + 1]

(* Local read hit: a valid line, and no transaction in flight for the key   *)
(* but an upgrade (SE_A: the line keeps its old value strictly), or (paper- *)
(* literal) the owner's own direct write.                                    *)
ReadHit(c) ==
    /\ Ready(c)
    /\ LET n == ClientNode[c]  k == Op(c).key  l == line[n][k]
       IN  /\ Op(c).op = "R" /\ Valid(l)
           /\ \/ cpend[n][k].kind \in {"none", "W"}
              \/ cpend[n][k].kind = "OW" /\ "owner_read_in_flight" \in Literal
           /\ hist' = [hist EXCEPT ![c] = Append(@, [kind |-> "R", key |-> k, val |-> l.val,
                                                     inv |-> clock + 1, ret |-> clock + 2])]
           /\ clock' = clock + 2
           /\ pc' = [pc EXCEPT ![c] = @ + 1]
    /\ UNCHANGED <<cacheVars, homeVars, chan, store, failVars, ghostVars, waiting, stopped>>

(* Remote read hit or read miss: the request goes to the home.             *)
ReadReq(c) ==
    /\ Ready(c)
    /\ LET n == ClientNode[c]  k == Op(c).key
       IN  /\ Op(c).op = "R" /\ ~Valid(line[n][k]) /\ cpend[n][k] = None /\ HomeKnown(n, k)
           /\ cpend' = [cpend EXCEPT ![n][k] = [None EXCEPT !.kind = "R", !.c = c]]
           /\ chan' = Send(chan, {<<<<n, Home(k)>>, Req("RdReq", k, 0)>>})
           /\ Invoke(c, "R", k, 0)
    /\ waiting' = [waiting EXCEPT ![c] = TRUE]
    /\ UNCHANGED <<line, homeVars, store, failVars, ghostVars, stopped>>

(* Local write hit in E: update the line, write storage directly.           *)
OwnerWrite(c) ==
    /\ Ready(c)
    /\ LET n == ClientNode[c]  k == Op(c).key  v == Op(c).val
       IN  /\ Op(c).op = "W" /\ line[n][k].st = "E" /\ cpend[n][k] = None
           /\ line' = [line EXCEPT ![n][k].val = v]
           /\ cpend' = [cpend EXCEPT ![n][k] = [None EXCEPT !.kind = "OW", !.c = c, !.v = v]]
           /\ chan' = Send(chan, {<<<<n, DB>>, [t |-> "StPut", k |-> k, v |-> v, q |-> n, own |-> TRUE, seq |-> wseq[k] + 1]>>})
           /\ wseq' = [wseq EXCEPT ![k] = @ + 1]
           /\ Invoke(c, "W", k, v)
    /\ waiting' = [waiting EXCEPT ![c] = TRUE]
    /\ UNCHANGED <<homeVars, store, failVars, stseq, reordered, stopped>>

(* Local write hit in S (an upgrade), remote write hit, write miss: the     *)
(* write goes to the home.  Paper-literal, an S line takes the value now.   *)
WriteReq(c) ==
    /\ Ready(c)
    /\ LET n == ClientNode[c]  k == Op(c).key  v == Op(c).val
       IN  /\ Op(c).op = "W" /\ line[n][k].st # "E" /\ cpend[n][k] = None /\ HomeKnown(n, k)
           /\ line' = IF line[n][k].st = "S" /\ "upgrade_local_first" \in Literal
                      THEN [line EXCEPT ![n][k].val = v] ELSE line
           /\ cpend' = [cpend EXCEPT ![n][k] = [None EXCEPT !.kind = "W", !.c = c, !.v = v]]
           /\ chan' = Send(chan, {<<<<n, Home(k)>>, Req("WrReq", k, v)>>})
           /\ Invoke(c, "W", k, v)
    /\ waiting' = [waiting EXCEPT ![c] = TRUE]
    /\ UNCHANGED <<homeVars, store, failVars, ghostVars, stopped>>

\* Messages the cache side receives from h (not while fenced).
CacheMsg(h, n, t) ==
    /\ n \in alive /\ Has(h, n) /\ Msg(h, n).t = t /\ ~(Fenced(n) /\ h = failed)

CacheData(h, n) ==
    /\ CacheMsg(h, n, "Data")
    /\ LET m == Msg(h, n)  p == cpend[n][m.k]
       IN  /\ p.kind = "R"
           /\ line' = [line EXCEPT ![n][m.k] = [st |-> IF m.own THEN "E" ELSE "S", val |-> m.v]]
           /\ cpend' = [cpend EXCEPT ![n][m.k] = None]
           /\ Respond(p.c, m.v)
    /\ chan' = Recv(chan, <<h, n>>)
    /\ UNCHANGED <<homeVars, store, failVars, ghostVars>>

CacheWrAck(h, n) ==
    /\ CacheMsg(h, n, "WrAck")
    /\ LET m == Msg(h, n)  p == cpend[n][m.k]
       IN  /\ p.kind = "W"
           /\ line' = [line EXCEPT ![n][m.k] = [st |-> "E", val |-> p.v]]
           /\ cpend' = [cpend EXCEPT ![n][m.k] = None]
           /\ Respond(p.c, 0)
    /\ chan' = Recv(chan, <<h, n>>)
    /\ UNCHANGED <<homeVars, store, failVars, ghostVars>>

\* The owner defers forwarded reads and invalidations while its direct write
\* is in flight (they wait at the head of the link).
Defers(n, k) == cpend[n][k].kind = "OW" /\ Mutant # "no_owner_deferral"

OwnerFwdRd(h, n) ==
    /\ CacheMsg(h, n, "FwdRd")
    /\ LET m == Msg(h, n)  l == line[n][m.k]
       IN  /\ ~Defers(n, m.k)
           /\ line' = IF Valid(l) THEN [line EXCEPT ![n][m.k].st = "S"] ELSE line
           /\ chan' = Send(Recv(chan, <<h, n>>),
                           {<<<<n, h>>, Req(IF Valid(l) THEN "FwdData" ELSE "FwdNack", m.k, l.val)>>})
    /\ UNCHANGED <<cpend, homeVars, store, failVars, ghostVars, clientVars>>

\* An invalidation; an upgrade in flight loses its line and goes on as a write
\* from I (another write was serialized first).
CacheInv(h, n) ==
    /\ CacheMsg(h, n, "Inv")
    /\ LET m == Msg(h, n)
       IN  /\ ~Defers(n, m.k)
           /\ line' = [line EXCEPT ![n][m.k] = LineI]
           /\ chan' = Send(Recv(chan, <<h, n>>), {<<<<n, h>>, Req("InvAck", m.k, 0)>>})
    /\ UNCHANGED <<cpend, homeVars, store, failVars, ghostVars, clientVars>>

OwnerStAck(n) ==
    /\ n \in alive /\ Has(DB, n) /\ Msg(DB, n).t = "StAck" /\ Msg(DB, n).own
    /\ LET m == Msg(DB, n)  p == cpend[n][m.k]
       IN  /\ p.kind = "OW"
           /\ cpend' = [cpend EXCEPT ![n][m.k] = None]
           /\ Respond(p.c, 0)
    /\ chan' = Recv(chan, <<DB, n>>)
    /\ UNCHANGED <<line, homeVars, store, failVars, ghostVars>>

(* Silent eviction of an idle line.                                         *)
Evict(n, k) ==
    /\ Evictions /\ n \in alive /\ Valid(line[n][k]) /\ cpend[n][k] = None
    /\ line' = [line EXCEPT ![n][k] = LineI]
    /\ UNCHANGED <<cpend, homeVars, chan, store, failVars, ghostVars, clientVars>>

-----------------------------------------------------------------------------
(* External writes (section III-C3): an application outside the domain     *)
(* writes storage; the listener function tells the controller, which tells *)
(* the key's home (the link CTL -> home).  Paper-literal, storage applies  *)
(* the write and acknowledges it at once, and the home then invalidates    *)
(* every copy ("handles the external write as a local write").  Strictly  *)
(* (external_through_home), storage hands the write on unapplied and the   *)
(* home writes it like a function's write: invalidations, the storage      *)
(* write, then the answer to the external application.                     *)
ExtWrite(c) ==
    /\ c \in ExtClients /\ ~waiting[c] /\ pc[c] < Len(Plan[c])
    /\ LET k == Op(c).key  v == Op(c).val
           notice == Send(chan, {<<<<CTL, Home(k)>>, Req("ExtReq", k, v)>>})
       IN  IF "external_at_storage" \in Literal
           THEN /\ store' = [store EXCEPT ![k] = v]
                /\ wseq' = [wseq EXCEPT ![k] = @ + 1]
                /\ stseq' = [stseq EXCEPT ![k] = wseq[k] + 1]
                /\ chan' = notice
                /\ hist' = [hist EXCEPT ![c] = Append(@, [kind |-> "W", key |-> k, val |-> v,
                                                         inv |-> clock + 1, ret |-> clock + 2])]
                /\ clock' = clock + 2
                /\ pc' = [pc EXCEPT ![c] = @ + 1]
                /\ UNCHANGED <<reordered, waiting>>
           ELSE /\ chan' = notice
                /\ Invoke(c, "W", k, v)
                /\ waiting' = [waiting EXCEPT ![c] = TRUE]
                /\ UNCHANGED <<store, ghostVars>>
    /\ UNCHANGED <<cacheVars, homeVars, failVars, stopped>>

\* The home's answer reaches the external application (strictly).
ExtAck(h) ==
    /\ Has(h, CTL) /\ Msg(h, CTL).t = "ExtAck"
    /\ chan' = Recv(chan, <<h, CTL>>)
    /\ \E c \in ExtClients : waiting[c] /\ Respond(c, 0)
    /\ UNCHANGED <<cacheVars, homeVars, store, failVars, ghostVars>>

-----------------------------------------------------------------------------
(* Storage.                                                                 *)

StorageGet(n) ==
    /\ Has(n, DB) /\ Msg(n, DB).t = "StGet"
    /\ LET m == Msg(n, DB)
       IN  chan' = Send(Recv(chan, <<n, DB>>), {<<<<DB, n>>, Rep("StData", m.k, store[m.k], m.q)>>})
    /\ UNCHANGED <<cacheVars, homeVars, store, failVars, ghostVars, clientVars>>

\* A write from a fenced agent is dropped (unless the mutant).
StoragePut(n) ==
    /\ Has(n, DB) /\ Msg(n, DB).t = "StPut"
    /\ LET m == Msg(n, DB)
       IN  IF StorageFences /\ n = failed
           THEN chan' = Recv(chan, <<n, DB>>) /\ UNCHANGED <<store, ghostVars>>
           ELSE /\ store' = [store EXCEPT ![m.k] = m.v]
                /\ stseq' = [stseq EXCEPT ![m.k] = m.seq]
                /\ reordered' = (reordered \/ m.seq < stseq[m.k])
                /\ chan' = Send(Recv(chan, <<n, DB>>), {<<<<DB, n>>, [m EXCEPT !.t = "StAck"]>>})
                /\ UNCHANGED wseq
    /\ UNCHANGED <<cacheVars, homeVars, failVars, clientVars>>

-----------------------------------------------------------------------------
(* Failure (section III-F, III-H).                                          *)

Crash(f) ==
    /\ f \in CrashNodes /\ failed = NoNode /\ f \in alive /\ leaver = NoNode
    /\ alive' = alive \ {f}
    /\ failed' = f
    /\ phase' = "crashed"
    \* Its state is lost; what is on the wire to it is lost too.
    /\ line' = [line EXCEPT ![f] = [k \in Keys |-> LineI]]
    /\ cpend' = [cpend EXCEPT ![f] = [k \in Keys |-> None]]
    /\ dir' = [dir EXCEPT ![f] = [k \in Keys |-> NoDir]]
    /\ act' = [act EXCEPT ![f] = [k \in Keys |-> {}]]
    /\ queue' = [queue EXCEPT ![f] = [k \in Keys |-> <<>>]]
    /\ chan' = [p \in DOMAIN chan |-> IF p[2] = f THEN <<>> ELSE chan[p]]
    /\ stopped' = [c \in Clients |-> stopped[c] \/ ClientNode[c] = f]
    /\ UNCHANGED <<store, members, recovered, leaver, lphase, ghostVars, pc, waiting, hist, clock>>

\* The coordination service misses its heartbeats and tells the domain and
\* storage; storage fences the failed agent's writes at once.
Detect ==
    /\ phase = "crashed"
    /\ phase' = "recovering"
    /\ recovered' = {DB}
    /\ UNCHANGED <<cacheVars, homeVars, chan, store, alive, members, failed, leaver, lphase, ghostVars, clientVars>>

(* Survivor m handles the failure notice: it fences the failed agent,      *)
(* evicts the lines it homed (after draining its own direct writes to them),*)
(* drops its queued requests, fails its writes to it (indeterminate: the   *)
(* function is retried elsewhere) and holds its reads.                     *)
Recover(m) ==
    /\ phase = "recovering" /\ m \in alive \ recovered
    /\ \A k \in Keys : Home(k) = failed => cpend[m][k].kind # "OW"
    /\ LET lost(k) == Home(k) = failed
           cancelled == {cpend[m][k].c : k \in {k \in Keys : lost(k) /\ cpend[m][k].kind = "W"}}
       IN  /\ line' = [line EXCEPT ![m] = [k \in Keys |->
                          IF lost(k) /\ Mutant # "no_failure_eviction" THEN LineI ELSE line[m][k]]]
           /\ cpend' = [cpend EXCEPT ![m] = [k \in Keys |->
                          CASE lost(k) /\ cpend[m][k].kind = "W" -> None
                            [] lost(k) /\ cpend[m][k].kind = "R" -> [cpend[m][k] EXCEPT !.reissue = TRUE]
                            [] OTHER -> cpend[m][k]]]
           /\ queue' = [queue EXCEPT ![m] = [k \in Keys |-> SelectSeq(queue[m][k], LAMBDA r : r.q # failed)]]
           /\ stopped' = [c \in Clients |-> stopped[c] \/ c \in cancelled]
           /\ waiting' = [c \in Clients |-> waiting[c] /\ c \notin cancelled]
    /\ recovered' = recovered \cup {m}
    /\ UNCHANGED <<dir, act, chan, store, alive, members, failed, phase, leaver, lphase, ghostVars, pc, hist, clock>>

(* Every survivor and storage handled it: the new ring is in force, and   *)
(* homes drop the failed agent from their entries (not before: an entry   *)
(* naming it as the owner must not let storage serve its key while its     *)
(* direct write may still land).                                           *)
EndRecovery ==
    /\ phase = "recovering" /\ recovered = alive \cup {DB}
    /\ members' = members \ {failed}
    /\ phase' = "done"
    /\ dir' = [n \in Nodes |-> [k \in Keys |-> DropSharer(dir[n][k], failed)]]
    /\ UNCHANGED <<cacheVars, act, queue, chan, store, alive, failed, recovered, leaver, lphase, ghostVars, clientVars>>

(* After recovery, a home treats the failed agent's missing answers as     *)
(* received: an invalidation as acknowledged, a forwarded read as "don't   *)
(* have it".                                                                *)
HomeGiveUp(h, k) ==
    /\ phase = "done" /\ h \in alive
    /\ \E t \in act[h][k] :
         \/ /\ failed \in t.acks
            /\ LET u == [t EXCEPT !.acks = @ \ {failed}]
               IN  IF u.acks = {}
                   THEN AfterAcks(h, k, t, u, chan)
                   ELSE /\ act' = [act EXCEPT ![h][k] = (@ \ {t}) \cup {u}]
                        /\ UNCHANGED <<dir, chan, wseq>>
         \/ /\ t.kind = "Fwd" /\ t.o = failed
            /\ act' = [act EXCEPT ![h][k] = (@ \ {t}) \cup {Txn(t.q, "F", TRUE, 0, 0, {}, FALSE)}]
            /\ chan' = Send(chan, {<<<<h, DB>>, Rep("StGet", k, 0, t.q)>>})
            /\ UNCHANGED <<dir, wseq>>
    /\ UNCHANGED <<cacheVars, queue, store, failVars, stseq, reordered, clientVars>>

\* A read held during recovery goes to the key's new home.
Reissue(n, k) ==
    /\ phase = "done" /\ n \in alive /\ cpend[n][k].reissue
    /\ cpend' = [cpend EXCEPT ![n][k].reissue = FALSE]
    /\ chan' = Send(chan, {<<<<n, Home(k)>>, Req("RdReq", k, 0)>>})
    /\ UNCHANGED <<line, homeVars, store, failVars, ghostVars, clientVars>>

\* Lost messages: to a crashed agent, or from it to an agent that fenced it.
Drop(a, b) ==
    /\ b \in Nodes /\ Has(a, b)
    /\ b \notin alive \/ (Fenced(b) /\ a = failed)
    /\ chan' = Recv(chan, <<a, b>>)
    /\ UNCHANGED <<cacheVars, homeVars, store, failVars, ghostVars, clientVars>>

-----------------------------------------------------------------------------
(* Domain change (section III-D): agent d leaves, when none of its          *)
(* functions has a call in flight (an instance is destroyed when its        *)
(* functions are removed from the machine).  It drops its lines, holds new  *)
(* requests and finishes the directory transactions it has started.         *)
Leave(d) ==
    /\ d \in LeaveNodes /\ leaver = NoNode /\ failed = NoNode /\ d \in alive
    /\ \A k \in Keys : cpend[d][k] = None
    /\ leaver' = d
    /\ lphase' = "draining"
    /\ line' = [line EXCEPT ![d] = [k \in Keys |-> LineI]]
    /\ stopped' = [c \in Clients |-> stopped[c] \/ ClientNode[c] = d]
    /\ UNCHANGED <<cpend, homeVars, chan, store, alive, members, failed, phase, recovered,
                   ghostVars, pc, waiting, hist, clock>>

(* The first barrier: the departing agent synchronizes with every other    *)
(* one, a round trip on each FIFO link, so what either side sent before is *)
(* delivered; each switches to the ring without it and removes it from its *)
(* entries.  The departing agent has no transaction in flight any more.   *)
LeaveSync1 ==
    /\ lphase = "draining"
    /\ \A k \in Keys : act[leaver][k] = {}
    /\ \A a \in Nodes \ {leaver} : ~Has(a, leaver) /\ ~Has(leaver, a)
    /\ members' = members \ {leaver}
    /\ lphase' = "moving"
    /\ dir' = [n \in Nodes |-> IF n = leaver THEN dir[n]
                               ELSE [k \in Keys |-> DropSharer(dir[n][k], leaver)]]
    /\ UNCHANGED <<cacheVars, act, queue, chan, store, alive, failed, phase, recovered, leaver,
                   ghostVars, clientVars>>

(* The departing agent sends the entries of the keys it homed (its own     *)
(* copies gone) to its successor; it keeps them until the acknowledgment.  *)
(* The mutant drops them instead.                                          *)
LeaveHandOver ==
    /\ lphase = "moving"
    /\ LET entry(k) == IF OldHome(k) = leaver /\ Mutant # "leave_without_migration"
                       THEN DropSharer(dir[leaver][k], leaver) ELSE NoDir
       IN  chan' = Send(chan, {<<<<leaver, Successor>>, [t |-> "DirXfer", k |-> 0, v |-> [k \in Keys |-> entry(k)],
                                                         q |-> 0, own |-> FALSE, seq |-> 0]>>})
    /\ lphase' = "sent"
    /\ UNCHANGED <<cacheVars, homeVars, store, alive, members, failed, phase, recovered, leaver,
                   ghostVars, clientVars>>

\* The departing agent hands its held requests on to the successor, behind
\* the entries on the same link.
LeaveHandOn(k) ==
    /\ lphase \in {"sent", "installed", "acked"} /\ queue[leaver][k] # <<>>
    /\ LET r == Head(queue[leaver][k])
       IN  chan' = Send(chan, {<<<<leaver, Successor>>, [t |-> IF r.kind = "R" THEN "RdReq" ELSE "WrReq", k |-> k,
                                                         v |-> r.v, q |-> r.q, own |-> FALSE, seq |-> 0]>>})
    /\ queue' = [queue EXCEPT ![leaver][k] = Tail(@)]
    /\ UNCHANGED <<cacheVars, dir, act, store, failVars, ghostVars, clientVars>>

\* The successor installs the entries (under serve_before_entries, an entry it
\* made meanwhile stays) and acknowledges.
LeaveInstall(s) ==
    /\ s \in alive /\ Has(leaver, s) /\ Msg(leaver, s).t = "DirXfer"
    /\ LET e == Msg(leaver, s).v
       IN  dir' = [dir EXCEPT ![s] = [k \in Keys |-> IF OldHome(k) = leaver /\ dir[s][k] = NoDir
                                                    THEN e[k] ELSE dir[s][k]]]
    /\ chan' = Send(Recv(chan, <<leaver, s>>), {<<<<s, leaver>>, Req("XferAck", 0, 0)>>})
    /\ lphase' = "installed"
    /\ UNCHANGED <<cacheVars, act, queue, store, alive, members, failed, phase, recovered, leaver,
                   ghostVars, clientVars>>

LeaveAcked(s) ==
    /\ Has(s, leaver) /\ Msg(s, leaver).t = "XferAck"
    /\ dir' = [dir EXCEPT ![leaver] = [k \in Keys |-> NoDir]]
    /\ chan' = Recv(chan, <<s, leaver>>)
    /\ lphase' = "acked"
    /\ UNCHANGED <<cacheVars, act, queue, store, alive, members, failed, phase, recovered, leaver,
                   ghostVars, clientVars>>

(* The second barrier: every entry has moved, every held request too.      *)
LeaveSync2 ==
    /\ lphase = "acked" /\ \A k \in Keys : queue[leaver][k] = <<>>
    /\ lphase' = "done"
    /\ UNCHANGED <<cacheVars, homeVars, chan, store, alive, members, failed, phase, recovered, leaver,
                   ghostVars, clientVars>>

-----------------------------------------------------------------------------

Finished(c) == stopped[c] \/ (pc[c] = Len(Plan[c]) /\ ~waiting[c])

Quiet ==
    /\ \A c \in Clients : Finished(c)
    /\ \A p \in DOMAIN chan : chan[p] = <<>>
    /\ phase \in {"none", "done"}
    /\ lphase \in {"none", "done"}
    /\ \A n \in alive, k \in Keys : act[n][k] = {} /\ queue[n][k] = <<>> /\ cpend[n][k] = None

\* Every call has ended and nothing is in flight: the run is over.
Terminated == Quiet /\ UNCHANGED vars

Init ==
    /\ line = [n \in Nodes |-> [k \in Keys |-> LineI]]
    /\ cpend = [n \in Nodes |-> [k \in Keys |-> None]]
    /\ dir = [n \in Nodes |-> [k \in Keys |-> NoDir]]
    /\ act = [n \in Nodes |-> [k \in Keys |-> {}]]
    /\ queue = [n \in Nodes |-> [k \in Keys |-> <<>>]]
    /\ chan = [p \in Ends \X Ends |-> <<>>]
    /\ store = [k \in Keys |-> InitVal]
    /\ alive = Nodes
    /\ members = Nodes
    /\ failed = NoNode
    /\ phase = "none"
    /\ recovered = {}
    /\ leaver = NoNode
    /\ lphase = "none"
    /\ wseq = [k \in Keys |-> 0]
    /\ stseq = [k \in Keys |-> 0]
    /\ reordered = FALSE
    /\ pc = [c \in Clients |-> 0]
    /\ waiting = [c \in Clients |-> FALSE]
    /\ stopped = [c \in Clients |-> FALSE]
    /\ hist = [c \in Clients |-> <<>>]
    /\ clock = 0

\* The protocol's own steps (fair), and the environment's (not).
Protocol ==
    \/ \E c \in Clients : ReadHit(c) \/ ReadReq(c) \/ OwnerWrite(c) \/ WriteReq(c) \/ ExtWrite(c)
    \/ \E a \in Ends, b \in Nodes :
         HomeRecv(a, b) \/ HomeInvAck(a, b) \/ HomeFwdData(a, b) \/ CacheData(a, b)
         \/ CacheWrAck(a, b) \/ OwnerFwdRd(a, b) \/ CacheInv(a, b) \/ Drop(a, b)
    \/ \E n \in Nodes : HomeStData(n) \/ HomeStAck(n) \/ OwnerStAck(n) \/ StorageGet(n) \/ StoragePut(n)
    \/ \E h \in Nodes, k \in Keys : HomeDequeue(h, k) \/ HomeGiveUp(h, k) \/ Reissue(h, k)
    \/ Detect \/ EndRecovery
    \/ \E m \in Nodes : Recover(m) \/ LeaveInstall(m) \/ LeaveAcked(m) \/ ExtAck(m)
    \/ LeaveSync1 \/ LeaveHandOver \/ LeaveSync2
    \/ \E k \in Keys : LeaveHandOn(k)

Environment ==
    \/ \E n \in Nodes, k \in Keys : Evict(n, k) \/ DirEvict(n, k)
    \/ \E f \in Nodes : Crash(f) \/ Leave(f)

Next == Protocol \/ Environment \/ Terminated

Spec == Init /\ [][Next]_vars
FairSpec == Spec /\ WF_vars(Protocol)

-----------------------------------------------------------------------------
(* Invariants.                                                               *)

TypeOK ==
    /\ \A n \in Nodes, k \in Keys : line[n][k].st \in {"I", "S", "E"} /\ dir[n][k].st \in {"none", "S", "E"}
    /\ phase \in {"none", "crashed", "recovering", "done"}
    /\ lphase \in {"none", "draining", "moving", "sent", "installed", "acked", "done"}

\* I1, SWMR for stable lines: an E line is the only valid copy of its key.
SWMR ==
    \A k \in Keys, n \in alive, m \in alive :
        n # m /\ line[n][k].st = "E" => line[m][k].st = "I"

\* I2/I3 (the paper's "coherence states in all the caches are correct"):
\* every valid copy of a key whose home is alive is in the home's entry, and
\* an E copy is the entry's owner: no untracked copies.  While a departing
\* agent's entries move, its own entries are the ones that count.
DirectoryCoversCopies ==
    \A k \in Keys, n \in alive :
        Valid(line[n][k]) /\ Holder(k) \in alive =>
            /\ n \in dir[Holder(k)][k].sh
            /\ line[n][k].st = "E" => dir[Holder(k)][k] = [st |-> "E", sh |-> {n}]

\* I7, failure fencing: a survivor that handled the failure holds no line of
\* a key the failed agent homed while recovery lasts.
FailureFencing ==
    phase = "recovering" =>
        \A m \in recovered \cap alive, k \in Keys : Home(k) = failed => ~Valid(line[m][k])

\* I8, write ordering: storage never applies a write after a later-serialized one.
WriteOrder == ~reordered

(* Value-level linearizability of each key's history (Wing & Gong): some    *)
(* order of the completed calls and of any pending writes respects real   *)
(* time and register semantics.  Pending reads are dropped; a pending      *)
(* write (its function crashed, or its home did) may have taken effect.   *)
OpIds == UNION {{<<c, i>> : i \in 1..Len(Plan[c])} : c \in Clients}
H(o) == hist[o[1]][o[2]]
RetOf(o) == IF H(o).ret = 0 THEN Inf ELSE H(o).ret

RECURSIVE LinFrom(_, _)
LinFrom(S, cur) ==
    \/ \A o \in S : H(o).ret = 0
    \/ \E o \in S :
         /\ \A p \in S : ~(RetOf(p) < H(o).inv)
         /\ (H(o).kind = "R" => H(o).val = cur)
         /\ LinFrom(S \ {o}, IF H(o).kind = "W" THEN H(o).val ELSE cur)

KeyOps(k) == {o \in OpIds : o[2] <= Len(hist[o[1]]) /\ H(o).key = k /\ (H(o).kind = "W" \/ H(o).ret # 0)}

Linearizable == \A k \in Keys : LinFrom(KeyOps(k), InitVal)

(* Liveness: under fairness every call ends (answered, or failed with its   *)
(* machine or its home).                                                     *)
CallsComplete == <>(\A c \in Clients : Finished(c))

=============================================================================
