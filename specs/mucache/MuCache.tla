------------------------------- MODULE MuCache -------------------------------
(***************************************************************************)
(* MuCache (Zhang, Kallas, Pavlatos, Alur, Angel, Liu; NSDI '24): caches  *)
(* of downstream read-only calls in a microservice graph, filled and       *)
(* invalidated by per-service cache managers (CMs).  Written from the     *)
(* paper (section 4, Fig. 5, the prose around Figs. 4, 6, 7 and Appendix  *)
(* B.1), not from causim's Rust model; README.md next to this file maps    *)
(* each action to the paper and lists the choices.                         *)
(*                                                                         *)
(*   - Services run handlers that are fixed scripts of steps (read or     *)
(*     write a key of the service's own store, call an endpoint); calls   *)
(*     are sequential, so a client request's events happen one at a time. *)
(*   - The wrapper queues Start before a read-only request's first step   *)
(*     (B.1), collects its read set (keys read, endpoints called, hits    *)
(*     included), queues End(rs, ret, visited) at its return, and Inv(k)  *)
(*     after each write took effect (postWrite).  A call to a read-only   *)
(*     endpoint is answered from the cache when the entry's visited set   *)
(*     is disjoint from the request's (Fig. 4).                            *)
(*   - Each CM processes one queue in order (Fig. 5, right): Start and    *)
(*     Inv append to its history; End saves upstream (Save to the         *)
(*     caller's CM, remembered in saved) unless an Inv of something in rs *)
(*     follows the call's Start; an Inv pops saved and sends Inv of the   *)
(*     affected calls upstream.  CM-to-CM links are FIFO (Fig. 6).         *)
(*                                                                         *)
(* Two invariants: CacheFreeEquivalent (Theorem 1 on the history of every *)
(* finished request, each hit expanded into the reads of the call it     *)
(* stands for) and QuiescentCoherence (once nothing is in flight, every   *)
(* entry equals a cache-free evaluation on the current stores).           *)
(***************************************************************************)
EXTENDS Naturals, Sequences, FiniteSets, TLC

CONSTANTS
    Services,  \* service names
    Keys,      \* store keys (each written and read by one service only)
    Eps,       \* endpoints
    SvcOf,     \* SvcOf[e]: the service of endpoint e
    RO,        \* RO[e]: e is read-only (Def. 2): only its responses are cached
    Steps,     \* Steps[e]: its handler, a sequence of [op |-> "read"|"write", key |-> k]
               \*           or [op |-> "call", ep |-> e2]
    Entry,     \* Entry[c]: the endpoints client c calls, one request after the other
    RefusalInvalidates, \* TRUE: a CM that refuses a save sends Inv upstream (our fix of X11)
    ApplyOnArrival,     \* TRUE: Save/Inv change the cache when they arrive (digest O7)
    Mutant     \* "none", or a named bug of the Rust model the spec can express

Mutants == {"none", "visited_checks_off", "start_at_return", "caller_side_save",
            "inv_before_write", "non_fifo_save"}

ASSUME Mutant \in Mutants
ASSUME RefusalInvalidates \in BOOLEAN /\ ApplyOnArrival \in BOOLEAN

Clients == DOMAIN Entry

\* A request instance is <<c, n, path>>: client c's n-th request, then the
\* step indices of the calls leading to it.  Calls are fixed by the scripts,
\* so the tree of possible requests is static and needs no fresh ids.
RECURSIVE Tree(_, _)
Tree(e, path) ==
    {path} \cup UNION {Tree(Steps[e][i].ep, Append(path, i)) :
                        i \in {j \in 1..Len(Steps[e]) : Steps[e][j].op = "call"}}

Roots == UNION {{<<c, n>> : n \in 1..Len(Entry[c])} : c \in Clients}
Ids == UNION {{<<r[1], r[2], p>> : p \in Tree(Entry[r[1]][r[2]], <<>>)} : r \in Roots}

RECURSIVE EpAt(_, _)
EpAt(e, path) == IF path = <<>> THEN e ELSE EpAt(Steps[e][Head(path)].ep, Tail(path))

Ep(id) == EpAt(Entry[id[1]][id[2]], id[3])
Svc(id) == SvcOf[Ep(id)]
IsRoot(id) == id[3] = <<>>
Root(id) == <<id[1], id[2]>>
RootId(r) == <<r[1], r[2], <<>>>>
Parent(id) == <<id[1], id[2], SubSeq(id[3], 1, Len(id[3]) - 1)>>
Child(id, i) == <<id[1], id[2], Append(id[3], i)>>

None == [none |-> TRUE]

VARIABLES
    store,  \* store[k]: the version of k (0 initially; each write adds one)
    rq,     \* rq[id]: the request's state (st, pc, vin, vsub, rs, ret, wr)
    log,    \* log[r]: client request r's reads and writes, hits expanded (the history)
    cache,  \* cache[s][e]: [ret, vs], or None
    late,   \* late[s]: caller-side saves not yet in s's cache (mutant caller_side_save)
    q,      \* q[s]: s's CM queue
    hist,   \* hist[s]: s's CM history: call starts and invalidations
    saved,  \* saved[s]: [d, caller, ca]: caller cached ca, which depends on d
    link    \* link[<<from, to>>]: CM-to-CM messages in flight

vars == <<store, rq, log, cache, late, q, hist, saved, link>>

Idle == [st |-> "idle", pc |-> 0, vin |-> {}, vsub |-> {}, rs |-> {}, ret |-> <<>>, wr |-> FALSE]

\* What a handler's return holds: per step, the version read, the version
\* written or the callee's return.  Handlers are deterministic functions of
\* it, so it stands for any return value.
RECURSIVE Eval(_)
Eval(e) == [i \in 1..Len(Steps[e]) |->
              IF Steps[e][i].op = "read" THEN store[Steps[e][i].key] ELSE Eval(Steps[e][i].ep)]

\* The reads a cache-free call of read-only e returning r made, in order:
\* what a hit stands for (the virtual copy of the origin's subtree).
RECURSIVE VReads(_, _, _)
VReads(e, r, i) ==
    IF i > Len(Steps[e]) THEN <<>>
    ELSE (IF Steps[e][i].op = "read" THEN <<[op |-> "r", key |-> Steps[e][i].key, ver |-> r[i]]>>
          ELSE VReads(Steps[e][i].ep, r[i], 1)) \o VReads(e, r, i + 1)

Send(l, from, to, m) == [l EXCEPT ![<<from, to>>] = Append(@, m)]

TypeOK ==
    /\ store \in [Keys -> Nat]
    /\ \A id \in Ids : rq[id].st \in {"idle", "run", "wait", "done"}
    /\ \A s \in Services : \A e \in Eps : cache[s][e] /= None => RO[e]

Init ==
    /\ store = [k \in Keys |-> 0]
    /\ rq    = [id \in Ids |-> Idle]
    /\ log   = [r \in Roots |-> <<>>]
    /\ cache = [s \in Services |-> [e \in Eps |-> None]]
    /\ late  = [s \in Services |-> {}]
    /\ q     = [s \in Services |-> <<>>]
    /\ hist  = [s \in Services |-> <<>>]
    /\ saved = [s \in Services |-> {}]
    /\ link  = [p \in Services \X Services |-> <<>>]

-----------------------------------------------------------------------------
(* The wrapper and the handlers (Fig. 5, left).                             *)

(* Client c sends its next request to its entry service, once the one     *)
(* before has returned: no Start, since no cache upstream would hold the    *)
(* result.                                                                   *)
ClientStart(c) ==
    \E n \in 1..Len(Entry[c]) :
    LET id == <<c, n, <<>>>> IN
    /\ rq[id].st = "idle"
    /\ IF n = 1 THEN TRUE ELSE rq[<<c, n - 1, <<>>>>].st = "done"
    /\ rq' = [rq EXCEPT ![id] = [Idle EXCEPT !.st = "run", !.vin = {Svc(id)}, !.vsub = {Svc(id)}]]
    /\ UNCHANGED <<store, log, cache, late, q, hist, saved, link>>

(* A read (preRead adds the key to a read-only request's read set).         *)
Read(id) ==
    LET r == rq[id]  s == Ep(id)  k == Steps[s][r.pc + 1].key IN
    /\ r.st = "run" /\ r.pc < Len(Steps[s]) /\ Steps[s][r.pc + 1].op = "read"
    /\ rq' = [rq EXCEPT ![id].pc = @ + 1, ![id].ret = Append(@, store[k]),
                        ![id].rs = IF RO[s] THEN @ \cup {k} ELSE @]
    /\ log' = [log EXCEPT ![Root(id)] = Append(@, [op |-> "r", key |-> k, ver |-> store[k]])]
    /\ UNCHANGED <<store, cache, late, q, hist, saved, link>>

(* A write takes effect, and postWrite queues Inv(k) (O2), in one step.     *)
(* Mutant inv_before_write: Inv(k) is queued first, the write takes effect  *)
(* in a later step (X9).                                                     *)
Write(id) ==
    LET r == rq[id]  e == Ep(id)  k == Steps[e][r.pc + 1].key  v == store[k] + 1 IN
    /\ r.st = "run" /\ r.pc < Len(Steps[e]) /\ Steps[e][r.pc + 1].op = "write"
    /\ IF Mutant = "inv_before_write" /\ ~r.wr
       THEN /\ q' = [q EXCEPT ![Svc(id)] = Append(@, [t |-> "invk", k |-> k])]
            /\ rq' = [rq EXCEPT ![id].wr = TRUE]
            /\ UNCHANGED <<store, log>>
       ELSE /\ store' = [store EXCEPT ![k] = v]
            /\ q' = IF Mutant = "inv_before_write" THEN q
                    ELSE [q EXCEPT ![Svc(id)] = Append(@, [t |-> "invk", k |-> k])]
            /\ rq' = [rq EXCEPT ![id].pc = @ + 1, ![id].ret = Append(@, v), ![id].wr = FALSE]
            /\ log' = [log EXCEPT ![Root(id)] = Append(@, [op |-> "w", key |-> k, ver |-> v])]
    /\ UNCHANGED <<cache, late, hist, saved, link>>

(* preCall: a read-only request adds the callee to its read set; a call to  *)
(* a read-only endpoint whose entry's visited set is disjoint from the      *)
(* request's is a hit, which visits that set; otherwise the callee starts   *)
(* (the RPC and the start are one step: the caller waits, nobody sees the   *)
(* request in flight), from its caller's visited set plus its own service,  *)
(* with Start in its CM queue before its first step if it is read-only      *)
(* (B.1).  Mutant visited_checks_off: no check, and nothing inherited.      *)
Call(id) ==
    LET r == rq[id]  s == Ep(id)  e == Steps[s][r.pc + 1].ep  ent == cache[Svc(id)][e]
        checks == Mutant /= "visited_checks_off"
        rs == IF RO[s] THEN r.rs \cup {e} ELSE r.rs
        ch == Child(id, r.pc + 1) IN
    /\ r.st = "run" /\ r.pc < Len(Steps[s]) /\ Steps[s][r.pc + 1].op = "call"
    /\ IF RO[e] /\ ent /= None /\ (~checks \/ ent.vs \cap r.vin = {})
       THEN /\ rq' = [rq EXCEPT ![id].pc = @ + 1, ![id].ret = Append(@, ent.ret), ![id].rs = rs,
                                ![id].vin = @ \cup ent.vs, ![id].vsub = @ \cup ent.vs]
            /\ log' = [log EXCEPT ![Root(id)] = @ \o VReads(e, ent.ret, 1)]
            /\ UNCHANGED q
       ELSE /\ rq' = [rq EXCEPT ![id].st = "wait", ![id].rs = rs,
                                ![ch] = [Idle EXCEPT !.st = "run",
                                         !.vin = (IF checks THEN r.vin ELSE {}) \cup {SvcOf[e]},
                                         !.vsub = {SvcOf[e]}]]
            /\ q' = IF RO[e] /\ Mutant /= "start_at_return"
                    THEN [q EXCEPT ![SvcOf[e]] = Append(@, [t |-> "start", id |-> ch])]
                    ELSE q
            /\ UNCHANGED log
    /\ UNCHANGED <<store, cache, late, hist, saved, link>>

(* preReturn: a read-only request called by a service queues End; the      *)
(* caller resumes with the return and the callee's visited set.  Mutant     *)
(* start_at_return: Start reaches the queue only now (Fig. 20).  Mutant     *)
(* caller_side_save: the caller will cache the response itself (Fig. 6).    *)
Return(id) ==
    LET r == rq[id]  e == Ep(id)  s == Svc(id)  p == Parent(id)  caller == Svc(p)
        endq == [t |-> "end", id |-> id, ca |-> e, rs |-> r.rs, caller |-> caller, ret |-> r.ret, vs |-> r.vsub]
        startq == [t |-> "start", id |-> id] IN
    /\ r.st = "run" /\ r.pc = Len(Steps[e])
    /\ IF IsRoot(id)
       THEN /\ rq' = [rq EXCEPT ![id].st = "done"]
            /\ UNCHANGED <<q, late>>
       ELSE /\ rq' = [rq EXCEPT ![id].st = "done",
                                ![p].st = "run", ![p].pc = @ + 1, ![p].ret = Append(@, r.ret),
                                ![p].vin = @ \cup r.vsub, ![p].vsub = @ \cup r.vsub]
            /\ q' = IF ~RO[e] THEN q
                    ELSE IF Mutant = "start_at_return" THEN [q EXCEPT ![s] = @ \o <<startq, endq>>]
                    ELSE [q EXCEPT ![s] = Append(@, endq)]
            /\ late' = IF RO[e] /\ Mutant = "caller_side_save"
                       THEN [late EXCEPT ![caller] = @ \cup {[ca |-> e, ret |-> r.ret, vs |-> r.vsub]}]
                       ELSE late
    /\ UNCHANGED <<store, log, cache, hist, saved, link>>

(* Mutant caller_side_save: a response the caller kept lands in its cache,  *)
(* asynchronously (the TTL baseline's save).                                *)
LandSave(s) ==
    \E x \in late[s] :
        /\ cache' = [cache EXCEPT ![s][x.ca] = [ret |-> x.ret, vs |-> x.vs]]
        /\ late' = [late EXCEPT ![s] = @ \ {x}]
    /\ UNCHANGED <<store, rq, log, q, hist, saved, link>>

-----------------------------------------------------------------------------
(* The cache manager (Fig. 5, right), one queue item per step.             *)

HasCall(h) == \E i \in 1..Len(h) : h[i].t = "call"

\* Invalidations enter the history only while a call is running: older ones
\* could veto nothing (the garbage collection of section 4.1).
Record(h, ds) == IF HasCall(h) THEN Append(h, [t |-> "inv", ds |-> ds]) ELSE h

\* Drops leading invalidations (nothing running started before them).
RECURSIVE Trim(_)
Trim(h) == IF h /= <<>> /\ Head(h).t = "inv" THEN Trim(Tail(h)) ELSE h

\* The calls that cached something depending on ds, grouped by caller.
Affected(s, ds) == {x \in saved[s] : x.d \in ds}

\* Sends Inv(cas) to every caller whose cached calls depend on ds.
InvUp(l, s, ds) ==
    LET aff == Affected(s, ds) IN
    [p \in DOMAIN l |->
        IF p[1] = s /\ \E x \in aff : x.caller = p[2]
        THEN Append(l[p], [t |-> "inv", cas |-> {x.ca : x \in {y \in aff : y.caller = p[2]}}])
        ELSE l[p]]

CMStep(s) ==
    LET m == Head(q[s])  h == hist[s] IN
    /\ q[s] /= <<>>
    /\ q' = [q EXCEPT ![s] = Tail(@)]
    /\ CASE m.t = "start" ->
            /\ hist' = [hist EXCEPT ![s] = Append(@, [t |-> "call", id |-> m.id])]
            /\ UNCHANGED <<cache, saved, link>>
         [] m.t = "end" ->
            LET at == CHOOSE i \in 1..Len(h) : h[i] = [t |-> "call", id |-> m.id]
                stale == \E i \in (at + 1)..Len(h) : h[i].t = "inv" /\ h[i].ds \cap m.rs /= {}
                gone == SubSeq(h, 1, at - 1) \o SubSeq(h, at + 1, Len(h)) IN
            /\ hist' = [hist EXCEPT ![s] = Trim(gone)]
            /\ IF stale
               THEN /\ link' = IF RefusalInvalidates
                               THEN Send(link, s, m.caller, [t |-> "inv", cas |-> {m.ca}])
                               ELSE link
                    /\ UNCHANGED saved
               ELSE /\ link' = IF Mutant = "caller_side_save" THEN link
                               ELSE Send(link, s, m.caller, [t |-> "save", ca |-> m.ca, ret |-> m.ret, vs |-> m.vs])
                    /\ saved' = [saved EXCEPT ![s] = @ \cup {[d |-> d, caller |-> m.caller, ca |-> m.ca] : d \in m.rs}]
            /\ UNCHANGED cache
         [] m.t = "invk" ->
            /\ hist' = [hist EXCEPT ![s] = Record(h, {m.k})]
            /\ link' = InvUp(link, s, {m.k})
            /\ saved' = [saved EXCEPT ![s] = @ \ Affected(s, {m.k})]
            /\ UNCHANGED cache
         [] m.t = "inv" ->
            /\ hist' = [hist EXCEPT ![s] = Record(h, m.cas)]
            /\ link' = InvUp(link, s, m.cas)
            /\ saved' = [saved EXCEPT ![s] = @ \ Affected(s, m.cas)]
            /\ cache' = IF ApplyOnArrival THEN cache
                        ELSE [cache EXCEPT ![s] = [e \in Eps |-> IF e \in m.cas THEN None ELSE @[e]]]
         [] m.t = "save" ->
            /\ cache' = [cache EXCEPT ![s][m.ca] = [ret |-> m.ret, vs |-> m.vs]]
            /\ UNCHANGED <<hist, saved, link>>
    /\ UNCHANGED <<store, rq, log, late>>

(* A message from the CM of `from` reaches the CM of `to`, in link order    *)
(* (mutant non_fifo_save: any message in flight, X8).  With ApplyOnArrival  *)
(* a Save lands in the cache and an Inv deletes at once, in link order, and *)
(* the Inv's bookkeeping waits in the queue (O7); otherwise both wait.       *)
Deliver(from, to) ==
    \E i \in 1..Len(link[<<from, to>>]) :
    LET l == link[<<from, to>>]  m == l[i] IN
    /\ i = 1 \/ Mutant = "non_fifo_save"
    /\ link' = [link EXCEPT ![<<from, to>>] = SubSeq(l, 1, i - 1) \o SubSeq(l, i + 1, Len(l))]
    /\ IF ~ApplyOnArrival
       THEN /\ q' = [q EXCEPT ![to] = Append(@, m)]
            /\ UNCHANGED cache
       ELSE IF m.t = "save"
       THEN /\ cache' = [cache EXCEPT ![to][m.ca] = [ret |-> m.ret, vs |-> m.vs]]
            /\ UNCHANGED q
       ELSE /\ cache' = [cache EXCEPT ![to] = [e \in Eps |-> IF e \in m.cas THEN None ELSE @[e]]]
            /\ q' = [q EXCEPT ![to] = Append(@, m)]
    /\ UNCHANGED <<store, rq, log, late, hist, saved>>

Running == {id \in Ids : rq[id].st \in {"run", "wait"}}

Quiescent ==
    /\ Running = {}
    /\ \A s \in Services : q[s] = <<>> /\ late[s] = {}
    /\ \A p \in DOMAIN link : link[p] = <<>>

Terminated ==
    /\ Quiescent
    /\ \A r \in Roots : rq[RootId(r)].st = "done"
    /\ UNCHANGED vars

Next ==
    \/ \E c \in Clients : ClientStart(c)
    \/ \E id \in Ids : Read(id) \/ Write(id) \/ Call(id) \/ Return(id)
    \/ \E s \in Services : CMStep(s)
    \/ \E s \in Services : LandSave(s)
    \/ \E from, to \in Services : Deliver(from, to)
    \/ Terminated

Spec == Init /\ [][Next]_vars

-----------------------------------------------------------------------------
(* Invariants.                                                               *)

\* Quiescent coherence (digest section 4.4): once no request runs and no
\* queue, link or save is pending, every cache entry is what a cache-free
\* evaluation of its call returns on the current stores.
QuiescentCoherence ==
    Quiescent => \A s \in Services : \A e \in Eps : cache[s][e] /= None => cache[s][e].ret = Eval(e)

\* The version of k once the writes before position p (a position in each
\* client request's log) were done.
Cur(p, k) ==
    LET kw == UNION {{log[r][i].ver : i \in {j \in 1..p[r] : log[r][j].op = "w" /\ log[r][j].key = k}} : r \in Roots}
    IN  IF kw = {} THEN 0 ELSE CHOOSE v \in kw : \A u \in kw : u <= v

\* Request r's next event can come next in a cache-free execution: a read
\* sees the current version, a write makes the next one.
Can(p, r) ==
    /\ p[r] < Len(log[r])
    /\ LET ev == log[r][p[r] + 1]
       IN  IF ev.op = "r" THEN Cur(p, ev.key) = ev.ver ELSE Cur(p, ev.key) = ev.ver - 1

RECURSIVE Reach(_)
Reach(S) ==
    LET S2 == S \cup UNION {{[p EXCEPT ![r] = @ + 1] : r \in {r2 \in Roots : Can(p, r2)}} : p \in S}
    IN  IF S2 = S THEN S ELSE Reach(S2)

\* Theorem 1 on the history: while no request runs, some interleaving of
\* the clients' requests, each in its program order and with each hit
\* replaced by the reads of the call it stands for, has every read return
\* the latest write: a cache-free execution with the same client events.
\* Client requests are unordered, even one client's: MuCache promises no
\* session or real-time order (Fig. 3).
CacheFreeEquivalent ==
    Running = {} => [r \in Roots |-> Len(log[r])] \in Reach({[r \in Roots |-> 0]})

\* Witness against vacuity: a call answered by the cache (its step is done,
\* its callee never ran).
NotHit == ~\E id \in Ids : \E i \in 1..rq[id].pc :
              Steps[Ep(id)][i].op = "call" /\ rq[Child(id, i)].st = "idle"
=============================================================================
