n←1024 ⍝ small: n←16
⍝ A linear system by ⌹ (Householder QR in f64 on the device).
A←((n n⍴⍳997)÷997)+n×(⍳n)∘.=⍳n
b←(⍳n)÷n
x←b⌹A
+/x
