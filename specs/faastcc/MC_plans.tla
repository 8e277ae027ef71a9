------------------------------ MODULE MC_plans ------------------------------
(***************************************************************************)
(* The workflows the configs run (FaaSTCC's Plan and WritesOf).  t1       *)
(* writes x and y in one transaction; t2 reads y and x, in one chain of   *)
(* functions (ChainPlan) or in two parallel branches that join            *)
(* (FanOutPlan).  PromisePlan adds t0, which writes z first, and t3,      *)
(* which reads z and then x: its store read of x at a snapshot below t1's *)
(* commit, after that commit, is where a promise can reach t1's version.  *)
(***************************************************************************)
EXTENDS FaaSTCC

CONSTANTS t0, t1, t2, t3, x, y, z

TxnWrites == [t \in Txns |-> CASE t = t0 -> {z}
                               [] t = t1 -> {x, y}
                               [] t = t2 -> {}
                               [] t = t3 -> {}]

ChainPlan == [t \in Txns |-> CASE t = t1 -> << <<>> >>
                               [] t = t2 -> << <<y, x>> >>]

FanOutPlan == [t \in Txns |-> CASE t = t1 -> << <<>> >>
                                [] t = t2 -> << <<y>>, <<x>> >>]

PromisePlan == [t \in Txns |-> CASE t = t0 -> << <<>> >>
                                 [] t = t1 -> << <<>> >>
                                 [] t = t2 -> << <<y, x>> >>
                                 [] t = t3 -> << <<z, x>> >>]
=============================================================================
