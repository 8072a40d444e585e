'abc'+1
