⍝ Characters (issue 17, its first part: on the CPU reference; the GPU path hands
⍝ statements with characters to it), Dyalog APL 18, ⎕IO=1. Expected values from
⍝ Dyalog's documented semantics: a quoted literal of one character is a scalar,
⍝ characters compare equal only to the same character (never to a number), take and
⍝ expand fill with blanks, ⍋ orders by code point, arithmetic is a DOMAIN ERROR.
      'hello'
hello
      ⍴'hello'
5
      'it''s'
it's
      ⍴''
0
      ⍴⍴'a'
0
      2 3⍴'abcdef'
abc
def
      'abc'='abd'
1 1 0
      'abc'=1
0 0 0
      'a' 'b' 'c'
abc
      ⌽'hello'
olleh
      'banana'[⍋'banana']
aaabnn
      ⍒'banana'
3 5 1 2 4 6
      '|',(5↑'ab'),'|'
|ab   |
      '|',(¯5↑'ab'),'|'
|   ab|
      1 0 1\'ab'
a b
      (2 2⍴'abcd')⍪'ef'
ab
cd
ef
      'hello'~'l'
heo
      'an'⍷'banana'
0 1 0 1 0 0
      'abc'⍳'cx'
3 4
      'hello'∊'lo'
0 0 1 1 1
      ∪'mississippi'
misp
      ≠'banana'
1 1 1 0 0 0
      'ab'∘.='abc'
1 0 0
0 1 0
      ⍉2 3⍴'abcdef'
ad
be
cf
      x←'hello'
      x[1]←'J'
      x
Jello
      'a'+1
DOMAIN ERROR
      -'a'
DOMAIN ERROR
      ⍳'abc'
DOMAIN ERROR
      'abc'⍴2
DOMAIN ERROR
      'ab'≡'ab'
1
      'ab'≡'a'
0
      ≢'abc'
3
      +/'a'='banana'
3
      {⌽⍵}'abc'
cba
      (⌽,⊢)'ab'
baab
      'x⋄y'
x⋄y
      (3 2⍴'abcdef')⍳'cd'
2
      ' '=' a b'
1 0 1 0
      ⎕UCS 72 105
Hi
      ⎕UCS 'Hi'
72 105
      ⍴⎕UCS 2 2⍴65
2 2
      ⎕UCS ¯1
DOMAIN ERROR
      ⎕UCS 2.5
DOMAIN ERROR
      (⎕UCS 96+⍳3)⍳'c'
3
      ⍴⍕123
3
      ⍕1 2 3
1 2 3
      ⍴⍕1 2 3
5
      ⍴⍕2 3⍴⍳6
2 5
      ⍴⍕2 2 3⍴⍳12
2 2 8
      ⍕¯1.5 2
¯1.5 2
      'Total: ',⍕+/⍳10
Total: 55
      ⍕'abc'
abc
      ⍴⍕⍳0
0
      ⎕PP←5
      ⍕123.456789
123.46
      ⍕123456.7
1.2346E5
      ⎕PP←10
      ⍕0.0000001234
1.234E¯7
      ⍎'1+2'
3
      x←3
      ⍎'x×2'
6
      ⍎'÷0'
DOMAIN ERROR
      ⍎2
DOMAIN ERROR
      {⍎'⍵+1'}5
6
      5 0⍕2 3⍴⍳6
    1    2    3
    4    5    6
      4 0⍕1.1 2 ¯4 2.547
   1   2  ¯4   3
      4 1⍕1.1 2 ¯4 2.547
 1.1 2.0¯4.0 2.5
      3 0 6 2⍕3 2⍴10.1 15 1001 22.357 101 1110.1
 10 15.00
*** 22.36
101******
      ⍴5 2⍕2 3 4⍴⍳24
2 3 20
      1 2 3⍕4
LENGTH ERROR
      2⍕'a'
DOMAIN ERROR
⍝ arithmetic reductions and scans of characters are arithmetic between characters
      +/'ab'
DOMAIN ERROR
      ⌈\'ab'
DOMAIN ERROR
