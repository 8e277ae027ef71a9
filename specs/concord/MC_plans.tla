------------------------------ MODULE MC_plans ------------------------------
(***************************************************************************)
(* The functions the configs run (Concord's Clients, ClientNode, Plan).   *)
(* Key x (and y) has its position on the ring at PosX; writes write       *)
(* distinct values (1, 2), so every read names the write it saw.          *)
(*                                                                         *)
(*   Upgrade   c1 at agent 1 reads x, then writes 1 (an S upgrade once c3 *)
(*             shares it); c2 at agent 1 reads x; c3 at agent 2 reads x   *)
(*             twice.  x is homed at 2.                                    *)
(*   Owner     c1 at 1 reads x (E), then writes 1 directly; c2 at 2 and   *)
(*             c3 at 3 (x's home) read x.                                  *)
(*   OwnerInv  c1 at 1 reads x, writes 1, reads x; c2 at 2 (x's home)     *)
(*             writes 2 and reads x.                                       *)
(*   Race      c1 at 1 reads x twice; c2 at 2 (x's home) writes 1.        *)
(*   HomeCrash c1 at 1 reads x twice; c2 at 2 writes 1; x is homed at 3,  *)
(*             which may crash (agent 1 is its successor).                 *)
(*   OwnerCrash c1 at 1 reads x (E) and writes 1; c3 at 2 (x's home)     *)
(*             reads x, then writes 2; agent 1 may crash.                 *)
(*   OwnerRead c1 at 1 reads x (E) and writes 1; c2 at 1 reads x; c3 at   *)
(*             2 (x's home) reads x; agent 1 may crash.                   *)
(*   TwoKeys   c1 at 1 writes x then reads y; c2 at 2 writes y then      *)
(*             reads x; x homed at 1, y at 2.                              *)
(*   ConcUpgrade c1 at 1 and c2 at 2 (x's home) read x, then write 1 and  *)
(*             2 (two S-upgrades at once); c3 at 1 and c4 at 2 read x.    *)
(*   HomeCrashWrite c1 at 1 reads x and writes 1 (an S-upgrade once c3    *)
(*             at 2, x's home, shares it); c2 at 1 reads x twice; x's     *)
(*             home may crash.                                             *)
(*   ExtWrite  c1 at 1 reads x, writes 1 (directly, in E) and reads x;    *)
(*             c2 at 2 (x's home) reads x; e1, an external application's  *)
(*             function, writes 2 to storage (A11).                        *)
(*   Leave     the HomeCrash plan, with a departure instead of a crash:   *)
(*             c1 at 1 reads x twice, c2 at 2 writes 1; x's home (3)     *)
(*             may leave, or (MC_leave_any) any agent.                    *)
(***************************************************************************)
EXTENDS Concord

CONSTANTS c1, c2, c3, c4, e1, x, y

Rd(k) == [op |-> "R", key |-> k, val |-> 0]
Wr(k, v) == [op |-> "W", key |-> k, val |-> v]

PosX2 == x :> 2
PosX3 == x :> 3
PosXY == x :> 1 @@ y :> 2

UpgradeNodes == c1 :> 1 @@ c2 :> 1 @@ c3 :> 2
UpgradePlan == c1 :> <<Rd(x), Wr(x, 1)>> @@ c2 :> <<Rd(x)>> @@ c3 :> <<Rd(x), Rd(x)>>

OwnerNodes == c1 :> 1 @@ c2 :> 2 @@ c3 :> 3
OwnerPlan == c1 :> <<Rd(x), Wr(x, 1)>> @@ c2 :> <<Rd(x)>> @@ c3 :> <<Rd(x)>>

OwnerInvNodes == c1 :> 1 @@ c2 :> 2
OwnerInvPlan == c1 :> <<Rd(x), Wr(x, 1), Rd(x)>> @@ c2 :> <<Wr(x, 2), Rd(x)>>

RaceNodes == c1 :> 1 @@ c2 :> 2
RacePlan == c1 :> <<Rd(x), Rd(x)>> @@ c2 :> <<Wr(x, 1)>>

HomeCrashNodes == c1 :> 1 @@ c2 :> 2
HomeCrashPlan == c1 :> <<Rd(x), Rd(x)>> @@ c2 :> <<Wr(x, 1)>>

OwnerCrashNodes == c1 :> 1 @@ c3 :> 2
OwnerCrashPlan == c1 :> <<Rd(x), Wr(x, 1)>> @@ c3 :> <<Rd(x), Wr(x, 2)>>

OwnerReadNodes == c1 :> 1 @@ c2 :> 1 @@ c3 :> 2
OwnerReadPlan == c1 :> <<Rd(x), Wr(x, 1)>> @@ c2 :> <<Rd(x)>> @@ c3 :> <<Rd(x)>>

ConcUpgradeNodes == c1 :> 1 @@ c2 :> 2 @@ c3 :> 1 @@ c4 :> 2
ConcUpgradePlan == c1 :> <<Rd(x), Wr(x, 1)>> @@ c2 :> <<Rd(x), Wr(x, 2)>> @@ c3 :> <<Rd(x)>> @@ c4 :> <<Rd(x)>>

HomeCrashWriteNodes == c1 :> 1 @@ c2 :> 1 @@ c3 :> 2
HomeCrashWritePlan == c1 :> <<Rd(x), Wr(x, 1)>> @@ c2 :> <<Rd(x), Rd(x)>> @@ c3 :> <<Rd(x)>>

LeaveClientNodes == c1 :> 1 @@ c2 :> 2
LeavePlan == c1 :> <<Rd(x), Rd(x)>> @@ c2 :> <<Wr(x, 1)>>

ExtWriteNodes == c1 :> 1 @@ c2 :> 2 @@ e1 :> DB
ExtWritePlan == c1 :> <<Rd(x), Wr(x, 1), Rd(x)>> @@ c2 :> <<Rd(x)>> @@ e1 :> <<Wr(x, 2)>>

TwoKeysNodes == c1 :> 1 @@ c2 :> 2
TwoKeysPlan == c1 :> <<Wr(x, 1), Rd(y)>> @@ c2 :> <<Wr(y, 2), Rd(x)>>
=============================================================================
