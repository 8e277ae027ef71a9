------------------------------ MODULE MC_apps ------------------------------
(***************************************************************************)
(* The applications the configs run.                                       *)
(*                                                                         *)
(* Chain (Fig. 2's shape, one level deeper): F.read calls M.get, which    *)
(* calls B.get, which reads k at B and then calls A.get (a leaf with no   *)
(* steps: it keeps B.get running after its read, a window the Rust nodes  *)
(* need, as they run a handler's local steps in one go); B.put writes k.  *)
(* F caches M.get, M caches B.get and B caches A.get, so an invalidation  *)
(* of k travels two hops.  Client r reads through F once (ChainOneRead)   *)
(* or twice in a row (ChainTwoReads); w writes at B.                       *)
(*                                                                         *)
(* Diamond (Fig. 4): S1.upd calls S2.upd, which writes k at S4 (S4.put),  *)
(* then S3.get, which reads k at S4 (S4.get).  Client r fills S1's cache   *)
(* with S3.get (S1.read); client u then runs S1.upd: a hit on that entry  *)
(* would miss u's own write.                                               *)
(***************************************************************************)
EXTENDS MuCache

Rd(k) == [op |-> "read", key |-> k]
Wr(k) == [op |-> "write", key |-> k]
Cl(e) == [op |-> "call", ep |-> e]

ChainEps == {"F.read", "M.get", "B.get", "B.put", "A.get"}
ChainSvcOf == [e \in ChainEps |->
                 CASE e = "F.read" -> "F" [] e = "M.get" -> "M" [] e = "A.get" -> "A" [] OTHER -> "B"]
ChainRO == [e \in ChainEps |-> e /= "B.put"]
ChainSteps == [e \in ChainEps |->
                 CASE e = "F.read" -> <<Cl("M.get")>>
                   [] e = "M.get"  -> <<Cl("B.get")>>
                   [] e = "B.get"  -> <<Rd("k"), Cl("A.get")>>
                   [] e = "A.get"  -> <<>>
                   [] e = "B.put"  -> <<Wr("k")>>]
ChainOneRead  == ("r" :> <<"F.read">>) @@ ("w" :> <<"B.put">>)
ChainTwoReads == ("r" :> <<"F.read", "F.read">>) @@ ("w" :> <<"B.put">>)

DiamondEps == {"S1.read", "S1.upd", "S2.upd", "S3.get", "S4.get", "S4.put"}
DiamondSvcOf == [e \in DiamondEps |->
                   CASE e \in {"S1.read", "S1.upd"} -> "S1" [] e = "S2.upd" -> "S2"
                     [] e = "S3.get" -> "S3" [] OTHER -> "S4"]
DiamondRO == [e \in DiamondEps |-> e \in {"S1.read", "S3.get", "S4.get"}]
DiamondSteps == [e \in DiamondEps |->
                   CASE e = "S1.read" -> <<Cl("S3.get")>>
                     [] e = "S1.upd"  -> <<Cl("S2.upd"), Cl("S3.get")>>
                     [] e = "S2.upd"  -> <<Cl("S4.put")>>
                     [] e = "S3.get"  -> <<Cl("S4.get")>>
                     [] e = "S4.get"  -> <<Rd("k")>>
                     [] e = "S4.put"  -> <<Wr("k")>>]
DiamondClients == ("r" :> <<"S1.read">>) @@ ("u" :> <<"S1.upd">>)
=============================================================================
