--------------------------- MODULE MC_literal_scripts ---------------------------
(***************************************************************************)
(* The scripts under which three of the paper's literal readings fail      *)
(* (README.md, "Independence"), found by TLC with free choice at 2 servers,*)
(* 2 keys, 2 clients x 3 operations (MCbig_*: minutes) and replayed here  *)
(* in seconds.                                                             *)
(***************************************************************************)
EXTENDS CausalMeshScripted

CONSTANTS k1, k2, c1, c2

\* Fig. 7 line 8 literally: c1's second write of k1, at S1, gets S1's clock [0,1],
\* which is not above its first, [1,0]: the older write wins c1's own read.
WriteClockScript ==
    (c1 :> << [op |-> "w", s |-> 0, k |-> k1], [op |-> "w", s |-> 1, k |-> k1],
               [op |-> "r", s |-> 1, k |-> k1] >>) @@
    (c2 :> << >>)

\* Section 3.2 literally: S1's entry of k1 shows c1's first write with a merged clock
\* [1,2] inflated by c2's concurrent write; c1's second write [1,1], merged into c1's
\* read, does not beat that merged clock, so c1 reads its older write.
ResolutionScript ==
    (c1 :> << [op |-> "w", s |-> 0, k |-> k1], [op |-> "w", s |-> 1, k |-> k1],
               [op |-> "r", s |-> 1, k |-> k1] >>) @@
    (c2 :> << [op |-> "w", s |-> 1, k |-> k1], [op |-> "w", s |-> 0, k |-> k2] >>)

\* Fig. 8 line 7 literally: as above, but c1 reads k1 and k2 in a read transaction:
\* the merged clock [1,2] covers c1's second write [1,1], so the transaction does
\* not abort and returns c1's first write.
TxnAbortScript ==
    (c1 :> << [op |-> "w", s |-> 0, k |-> k1], [op |-> "w", s |-> 1, k |-> k1],
               [op |-> "rt", s |-> 1, k |-> {k1, k2}] >>) @@
    (c2 :> << [op |-> "w", s |-> 1, k |-> k1], [op |-> "w", s |-> 0, k |-> k2] >>)
\* Fig. 4's ServerWrite literally (point 9): c1's write of k2 at S1 depends on its
\* write of k1 at S0, but y's chain message (S1, S2, S0) does not carry it; the tail
\* S0 (k1's head) reveals y, c2 reads k1 there, then reads k1 at S2, which k1's own
\* chain has not reached yet: the dependency is missing and c2 reads the initial value.
ChainCarriesScript ==
    (c1 :> << [op |-> "w", s |-> 0, k |-> k1], [op |-> "w", s |-> 1, k |-> k2] >>) @@
    (c2 :> << [op |-> "r", s |-> 0, k |-> k1], [op |-> "r", s |-> 2, k |-> k1] >>)
=============================================================================
