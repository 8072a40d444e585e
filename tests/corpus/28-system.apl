⍝ System variables: ⎕PP (print precision), ⎕RL (the random seed), ⎕CT (Dyalog APL 18).
      ⎕PP←5
      ÷3
0.33333
      2÷3
0.66667
      ⎕PP
5
      123456.7
1.2346E5
      1 2.5 ÷3
0.33333 0.83333
      ⎕PP←3
      2 2⍴÷1 2 3 7
1     0.5
0.333 0.143
      ⎕PP←17
      0.5
0.5
      ⎕PP←0
DOMAIN ERROR
      ⎕PP←10
      ⎕PP
10
      ⎕CT
1E¯14
      ⎕CT←0
      (0.1+0.2)=0.3
1
⍝f64: 0
      ⌊2.9999999999999996
3
⍝f64: 2
      ⎕CT
0
      (0.1+0.2)∊0.3 0.5
1
⍝f64: 0
      ⎕CT←1E¯10
      1=1+1E¯11
1
      ⎕CT←1
DOMAIN ERROR
      ⎕CT←1E¯14
      (0.1+0.2)=0.3
1
      ⌊2.9999999999999996
3
      ⎕PW
80
      ⎕PW←100
      ⎕PW
100
      ⎕PW←41
DOMAIN ERROR
      ⎕PW←80
⍝ system variables assigned in a dfn are local to it (Dyalog localises them)
      f←{⎕IO←0 ⋄ ⍳⍵}
      f 3
0 1 2
      ⍳3
1 2 3
      +/f 4
6
      g←{+/f ⍵}
      g 4
6
      {⎕IO←0 ⋄ ⍳⍵}3
0 1 2
      ⍳2
1 2
      h←{⎕PP←3 ⋄ ⍕○1}
      h 0
3.14
      ⎕PP
10
