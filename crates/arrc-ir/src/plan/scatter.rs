//! Scatters: `⌸`'s atomic folds into groups and indexed assignment's replacement of
//! items at computed positions (the last of repeated positions wins).

use super::*;

impl Planner<'_> {
    /// `Inst::ScatterAdd`: one kernel over the items, folding into a buffer of the
    /// identity (zeroed for `+`, filled by a map first for `⌈ ⌊`); copied to the
    /// result by a map when it is the result.
    pub(super) fn scatter_add(&mut self, v: Value, op: BinOp, index: Value, values: Value) {
        let f = self.v.func;
        let elem = f.ty(v).elem;
        let len = self.len_of(v);
        let acc = if op == BinOp::Add {
            self.new_buffer(elem, len, BufferRole::Zeroed)
        } else {
            let acc = self.new_buffer(elem, len.clone(), BufferRole::Temp);
            let mut kb = self.kb();
            let out = kb.bind(acc, elem, true);
            let n_from = self.n_from(v, &mut kb);
            let groups = self.grid(&len, self.opts.map_groups);
            // Below (above) every item: every group has one.
            let fill = match (op, elem) {
                (BinOp::Max, ElemType::I64) => Scalar::I64(i64::MIN),
                (BinOp::Max, _) => Scalar::I32(i32::MIN),
                (_, ElemType::I64) => Scalar::I64(i64::MAX),
                _ => Scalar::I32(i32::MAX),
            };
            self.push_kernel(
                "fill",
                KernelKind::Map {
                    expr: KExpr::Const(fill),
                    out,
                },
                kb,
                vec![("n", len)],
                groups,
            );
            self.set_n_from(n_from);
            acc
        };
        let mut kb = self.kb();
        let index_e = self.expr(index, &IExpr::Index, &mut kb);
        let value_e = self.expr(values, &IExpr::Index, &mut kb);
        let out = kb.bind(acc, elem, true);
        let slots = kb.product(&f.ty(v).shape);
        self.bind_status(&mut kb, index_e.may_fail() || value_e.may_fail());
        // The items may be counted on the device (`⌸` scatters one per group): only
        // so many of the bound's are read.
        let n_from = self.n_from(index, &mut kb);
        let n = self.len_of(index);
        let groups = self.grid(&n, self.opts.map_groups);
        self.push_kernel(
            "scatter_add",
            KernelKind::ScatterAdd {
                op,
                index: index_e,
                value: value_e,
                out,
                slots,
            },
            kb,
            vec![("n", n)],
            groups,
        );
        self.set_n_from(n_from);
        self.buffer_of[v.index()] = Some(acc);
    }

    /// `Inst::Scatter`: the argument computed into the result's buffer by a map, then
    /// one kernel over the positions that stores each item its owner names.
    pub(super) fn scatter(
        &mut self,
        v: Value,
        arg: Value,
        index: Value,
        values: Value,
        owner: Value,
        is_result: bool,
    ) {
        let f = self.v.func;
        let elem = f.ty(v).elem;
        let b = self.result_or_temp(v, is_result);
        self.map_into(v, arg, b);
        // The result may be the parameter's buffer itself (`Plan::in_place`).
        let in_place = match (is_result, f.inst(arg), self.buffer_of[arg.index()]) {
            (true, Inst::Param { index }, Some(buffer)) => Some(InPlace {
                param: *index,
                buffer,
                copy: self.plan.dispatches.len() - 1,
            }),
            _ => None,
        };
        let owner_b = self.buffer_of[owner.index()].expect("a scatter's owners are a buffer");
        let mut kb = self.kb();
        let index_e = self.expr(index, &IExpr::Index, &mut kb);
        let value_e = self.expr(values, &IExpr::Index, &mut kb);
        let owner = kb.bind(owner_b, ElemType::I32, false);
        let out = kb.bind(b, elem, true);
        let guard = in_place.is_some();
        self.bind_status(&mut kb, guard || index_e.may_fail() || value_e.may_fail());
        // As in `scatter_add`: only so many of the bound's positions are read.
        let n_from = self.n_from(index, &mut kb);
        let n = self.len_of(index);
        let groups = self.grid(&n, self.opts.map_groups);
        self.push_kernel(
            "scatter",
            KernelKind::Scatter {
                index: index_e,
                value: value_e,
                owner,
                out,
                guard,
            },
            kb,
            vec![("n", n)],
            groups,
        );
        self.set_n_from(n_from);
        self.buffer_of[v.index()] = Some(b);
        self.plan.in_place = in_place;
    }
}
