'abc'
