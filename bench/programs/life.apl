m←8192 ⍝ small: m←40
⍝ Three generations of Conway's Life on a torus, neighbours by rotation.
B←3>7|(m m⍴⍳m-1)×13
N←(1⊖B)+(¯1⊖B)+(1⌽B)+(¯1⌽B)+(1⊖1⌽B)+(1⊖¯1⌽B)+(¯1⊖1⌽B)+¯1⊖¯1⌽B
B←(N=3)∨B∧N=2
N←(1⊖B)+(¯1⊖B)+(1⌽B)+(¯1⌽B)+(1⊖1⌽B)+(1⊖¯1⌽B)+(¯1⊖1⌽B)+¯1⊖¯1⌽B
B←(N=3)∨B∧N=2
N←(1⊖B)+(¯1⊖B)+(1⌽B)+(¯1⌽B)+(1⊖1⌽B)+(1⊖¯1⌽B)+(¯1⊖1⌽B)+¯1⊖¯1⌽B
B←(N=3)∨B∧N=2
+/,B
