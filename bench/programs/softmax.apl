r←8192 ⋄ c←1024 ⍝ small: r←16 ⋄ c←8
⍝ Row softmax of a matrix and the expected value of each row, summed.
X←(r c⍴⍳997)÷997
m←⌈/X
E←*X-⍉c r⍴m
s←+/E
P←E÷⍉c r⍴s
+/,P×X
