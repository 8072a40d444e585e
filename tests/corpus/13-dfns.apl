⍝ dfns: ⍺ ⍵, default ⍺, guards, local names, named functions, recursion.
      {⍵×2}5
10
      3{⍺+⍵}4
7
      {⍺←10 ⋄ ⍺+⍵}1
11
      5{⍺←10 ⋄ ⍺+⍵}1
6
      {⍵>0:1 ⋄ ⍵<0:¯1 ⋄ 0}¯5
¯1
      {⍵>0:1 ⋄ ⍵<0:¯1 ⋄ 0}0
0
      {⍵>0:1 ⋄ ⍵<0:¯1 ⋄ 0}7
1
      {a←⍵+1 ⋄ a×a}3
16
      sq←{⍵×⍵}
      sq 4
16
      sq sq 2
16
      sq¨1 2 3
1 4 9
      +/sq ⍳3
14
      fact←{⍵≤1:1 ⋄ ⍵×∇ ⍵-1}
      fact 5
120
      fact¨⍳6
1 2 6 24 120 720
      fib←{⍵≤2:1 ⋄ (∇ ⍵-1)+∇ ⍵-2}
      fib 10
55
      mean←{(+/⍵)÷≢⍵}
      mean 1 2 3 4
2.5
      2 {⍺×⍵} 3
6
      add←{⍺+⍵}
      1 add 2
3
      +/1 2 3 add 4
18
      {⍵ ⍵}1
1 1
      {⍵ ⍵}1 2
 1 2  1 2
      {⍺}1
VALUE ERROR
      {1 2:3 ⋄ 4}0
DOMAIN ERROR
      f←{g←{⍵+1} ⋄ g g ⍵}
      f 1
3
      {x←⍵ ⋄ x}5
5
      x
VALUE ERROR
      {(⍺⍺)⍵}1
SYNTAX ERROR
      3{{⍺←1 ⋄ ⍺+⍵}⍵}4
5
      lexa←5
      lexf←{lexa+⍵}
      {lexa←100 ⋄ lexf ⍵}1
6
      {lexa←100 ⋄ {lexa+⍵}⍵}1
101
      lexg←{⍵:lexa ⋄ 0}
      {lexa←100 ⋄ lexg ⍵}1
5
      {lexb←7 ⋄ {⍵:lexb ⋄ 0}⍵}1
7
      dk←3
      {⍺+⍵×dk}/⍳5
547
      {⍺-⍵×dk}\⍳5
1 ¯5 22 ¯86 319
      {k←+/⍵ ⋄ {⍺+⍵÷k}/⍵}1 2 3 4
1.234
      {dk+⍵}¨⍳3
4 5 6
      {⍺+dk×⍵}⌿3 2⍴⍳6
55 68
⍝ an operand may compute from outside names: +/dv runs once, before the fold
      dv←1 2 3
      {⍺+⍵×+/dv}/1 2 3
121
      {⍵×⌈/dv}¨1 2 3
3 6 9
⍝ guards in operands: only the chosen side runs
      {⍵>0:⍺+⍵ ⋄ ⍺-⍵}/1 ¯2 3
2
      {⍵=0:0 ⋄ 8÷⍵}¨4 0 ¯2
2 0 ¯4
      1 ¯2 3∘.{⍺>⍵:⍺ ⋄ ⍵}1 ¯2
1  1
1 ¯2
3  3
