⍝ Every error class.
      1 2 3+4 5
LENGTH ERROR
      (2 2⍴⍳4)+1 2
RANK ERROR
      undefined+1
VALUE ERROR
      1÷0
DOMAIN ERROR
      ÷0
DOMAIN ERROR
      ⍳¯1
DOMAIN ERROR
      ⍳2.5
DOMAIN ERROR
      'abc'+1
DOMAIN ERROR
      1 2 3[4]
INDEX ERROR
      (1 2 3)[0]
INDEX ERROR
      1 2⍉2 2 2⍴⍳8
LENGTH ERROR
      ~2
DOMAIN ERROR
      ⍟0
DOMAIN ERROR
      1+
SYNTAX ERROR
      (1+2
SYNTAX ERROR
      1+)
SYNTAX ERROR
      1 $ 2
SYNTAX ERROR
      2 2⍴¯1
¯1 ¯1
¯1 ¯1
      ¯1⍴5
DOMAIN ERROR
      1 2 3⍳2 2⍴⍳4
1 2
3 4
      1 2↑2 2 2⍴0
0 0
0 0
      2 2⍴1 2 3
1 2
3 1
      ¯2!3
0
⍝ beyond 64-bit integers (Dyalog would switch to floats)
      (2147483647×2147483647)×4
DOMAIN ERROR
      ⎕IO←2
DOMAIN ERROR
