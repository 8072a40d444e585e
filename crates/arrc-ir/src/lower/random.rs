//! Lowering `?⍵` (roll) when its argument's values are known when compiling (`?6`,
//! `?1000⍴6`, `?n⍴0`): one draw per item from the session's generator, numbered
//! from its counter, so the reference and the device draw the same numbers.

use super::*;

impl Lower {
    pub(super) fn roll(&mut self, x: Value, span: Span) -> Result<Value> {
        let unsupported = |what: &str| {
            Err(err::unsupported(
                format!("{what} is not supported on the GPU path yet"),
                span.clone(),
            ))
        };
        if crate::random::device_rng().is_none() {
            return unsupported("? outside a session");
        }
        if self.trials > 0 {
            return unsupported("? in a function applied item by item");
        }
        let xt = self.f.ty(x).clone();
        let Some(dims) = known_dims(&xt.shape) else {
            return unsupported("? of an array whose length is known only at run time");
        };
        let count = crate::array::saturating_count(&dims) as u64;
        let Some(vals) = self.roll_values(x) else {
            // Integers computed on the device: an i32 result, their items checked
            // there.
            if !xt.elem.is_int() {
                return unsupported("? of floats computed on the device");
            }
            return Ok(self.push_roll(x, count, ElemType::I32, true, xt.shape, span));
        };
        let mut ns = Vec::with_capacity(vals.len());
        for v in vals {
            match v.as_i64() {
                Some(n) if n >= 0 => ns.push(n),
                _ => return Err(err::domain("? needs non-negative integers", span)),
            }
        }
        let io = self.io;
        let elem = if count > 0 && ns.contains(&0) {
            self.f.float
        } else if ns.iter().any(|&n| n - 1 + io > i32::MAX as i64) {
            return unsupported("? of numbers beyond 32 bits");
        } else {
            ElemType::I32
        };
        let x = if xt.elem.is_int() {
            x
        } else {
            self.cast(x, ElemType::I64)
        };
        Ok(self.push_roll(x, count, elem, false, xt.shape, span))
    }

    /// `k?n` where it deals by sorting keys (`crate::random::DEAL_KEYS`): the first
    /// `k` of the grade of a roll of `n` keys, with `k` and `n` known here. A deal of
    /// few items from many (a partial shuffle, one draw after another) runs on the
    /// reference.
    pub(super) fn deal(&mut self, a: Value, x: Value, span: Span) -> Result<Value> {
        let unsupported = |what: &str| {
            Err(err::unsupported(
                format!("{what} is not supported on the GPU path yet"),
                span.clone(),
            ))
        };
        let one = |v: Option<Vec<i64>>| match v.as_deref() {
            Some([k]) if *k >= 0 => Some(*k as u64),
            _ => None,
        };
        let (Some(k), Some(n)) = (one(self.const_ints(a)), one(self.const_ints(x))) else {
            // The reference says which error, or deals numbers computed on the device.
            return unsupported("⍺?⍵ of these arguments");
        };
        if k > n || !crate::random::deal_sorts(k, n) {
            return unsupported("⍺?⍵ of few items from many (a partial shuffle)");
        }
        if (n - 1) as i64 + self.io > i32::MAX as i64 {
            return unsupported("⍺?⍵ beyond 32 bits");
        }
        if crate::random::device_rng().is_none() || self.trials > 0 {
            return unsupported("? here");
        }
        let len = vec![Dim::Known(n)];
        let top = self.konst(
            Array::scalar(Scalar::I32(crate::random::DEAL_KEYS as i32)),
            span.clone(),
        );
        let tops = self.reshape(top, len.clone(), span.clone());
        let keys = self.push_roll(tops, n, ElemType::I32, false, len.clone(), span.clone());
        let order = self.f.push(
            Inst::Grade {
                arg: keys,
                down: false,
                origin: self.io as i32,
            },
            Type {
                elem: ElemType::I32,
                shape: len,
            },
            span.clone(),
        );
        let kv = self.konst(Array::scalar(Scalar::I32(k as i32)), span.clone());
        self.structural2(Prim::Take, kv, order, None, span)
    }

    /// A roll of `count` items drawn after this program's earlier draws.
    fn push_roll(
        &mut self,
        x: Value,
        count: u64,
        elem: ElemType,
        checked: bool,
        shape: Vec<Dim>,
        span: Span,
    ) -> Value {
        let io = self.io;
        let offset = self.f.draws;
        self.f.draws = self.f.draws.wrapping_add(count);
        let state = self.f.push(
            Inst::RngState,
            Type {
                elem: ElemType::I32,
                shape: vec![Dim::Known(4)],
            },
            span.clone(),
        );
        self.f.push(
            Inst::Roll {
                arg: x,
                state,
                origin: io as i32,
                offset,
                checked,
            },
            Type { elem, shape },
            span,
        )
    }

    /// The values of a roll's argument, where they are known here: a literal, or a
    /// literal reshaped or converted.
    fn roll_values(&self, v: Value) -> Option<Vec<Scalar>> {
        match self.f.inst(v) {
            Inst::Const(a) => Some((0..a.len()).map(|i| a.data.get(i)).collect()),
            Inst::Cast(x) => self.roll_values(*x),
            Inst::Gather {
                arg,
                map: Gather::Cycle { .. },
            } => {
                let vals = self.roll_values(*arg)?;
                // An empty argument gives fill items; none of them is drawn here.
                if vals.is_empty() {
                    return Some(vec![Scalar::I32(1)]);
                }
                Some(vals)
            }
            _ => self
                .known_value(v)
                .map(|a| (0..a.len()).map(|i| a.data.get(i)).collect()),
        }
    }
}
