⍝ f64 on request: ⎕FR←645 gives Dyalog's own precision and comparison tolerance.
      ⎕FR←645
      ⎕FR
645
      ÷3
0.3333333333
      2*0.5
1.414213562
      ○1
3.141592654
      +/÷⍳10
2.928968254
      (0.1+0.2)=0.3
1
      0.3≠0.1+0.2
0
      (0.1+0.2)-0.3
5.551115123E¯17
      ⌊0.1×30
3
      ⌈¯0.1×30
¯3
      1E300×10
1E301
      1E300×1E10
DOMAIN ERROR
      2 2⍴÷⍳4
1            0.5
0.3333333333 0.25
      ⌈/⍬
¯1.797693135E308
      1 2 3≡1 2 3×1+1E¯15
1
      ⎕FR←1287
DOMAIN ERROR
      ⎕FR←32
      ÷4
0.25
⍝ residue is tolerant (⎕CT): a quotient within ⎕CT of an integer leaves 0, as Dyalog
      ⎕FR←645
      0.1|0.3 1 0.7 0.25
0 0 0 0.05
      0.5|3.12 ¯1 ¯0.6
0.12 0 0.4
      ¯1 0 1|¯5.25 0 2.41
¯0.25 0 0.41
      ¯0.16666666666666655|0.1666666666666666
0
