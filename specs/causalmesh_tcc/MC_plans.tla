------------------------------ MODULE MC_plans ------------------------------
(***************************************************************************)
(* The workflows the configs run (CausalMeshTCC's Plan and WritesOf).      *)
(* t1 writes x and c in one batch; t2 reads x and writes x again, so x's   *)
(* second version depends on c's first only through x's first; t3 reads   *)
(* x and c, either in one chain of functions (ChainPlan) or in two         *)
(* parallel branches that join (JoinPlan).  A reader that sees t2's x and  *)
(* the initial c has read a fractured snapshot one write away from any    *)
(* direct dependency: the case the cut rules differ on.                    *)
(***************************************************************************)
EXTENDS CausalMeshTCC

CONSTANTS t1, t2, t3, x, c

TxnWrites == [t \in Txns |-> CASE t = t1 -> {x, c}
                               [] t = t2 -> {x}
                               [] t = t3 -> {}]

JoinPlan == [t \in Txns |-> CASE t = t1 -> << <<>> >>
                              [] t = t2 -> << <<x>> >>
                              [] t = t3 -> << <<x>>, <<c>> >>]

ChainPlan == [t \in Txns |-> CASE t = t1 -> << <<>> >>
                               [] t = t2 -> << <<x>> >>
                               [] t = t3 -> << <<c, x>> >>]
=============================================================================
