-------------------------- MODULE CausalMeshScripted --------------------------
(***************************************************************************)
(* CausalMesh with scripted clients: each client performs a fixed         *)
(* sequence of operations at fixed servers, and TLC explores every        *)
(* interleaving of those operations and of the chains.  The Stateright   *)
(* model's scripted sessions are the same, so a script bounds both model  *)
(* checkers identically (`causim model-check --script`, the agreement     *)
(* tests).                                                                 *)
(*                                                                         *)
(* A config runs the spec of CausalMesh.tla with two definitions          *)
(* overridden and the script defined by a generated module that extends   *)
(* this one:                                                              *)
(*     Script <- ScriptDef                                                *)
(*     ClientMay <- ScriptMay                                             *)
(*     ClientFinished <- ScriptFinished                                   *)
(***************************************************************************)
EXTENDS CausalMesh

CONSTANT Script   \* Script[c]: a sequence of [op |-> "r" | "w" | "rt", s |-> server,
                  \*   k |-> key ("r", "w") or set of keys ("rt")]

ASSUME \A c \in Clients : Len(Script[c]) <= MaxOps

\* The client has done its script, or a read transaction aborted its workflow.
ScriptFinished(c) == Len(hist[c]) >= Len(Script[c]) \/ ~Active(c)

\* Client c's next scripted step is op at server s on k.
ScriptMay(c, op, s, k) ==
    /\ ~ScriptFinished(c)
    /\ Script[c][Len(hist[c]) + 1] = [op |-> op, s |-> s, k |-> k]

=============================================================================
