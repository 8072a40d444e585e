//! `⌹` on the device (`Inst::Solve`): Householder QR in f64, one dispatch per column
//! (`KernelKind::QrStep`, repeated), then back substitution (`KernelKind::BackSubst`).

use super::*;

impl Planner<'_> {
    pub(super) fn solve(
        &mut self,
        v: Value,
        a: Value,
        b: Value,
        scale: Value,
        limit: f64,
        is_result: bool,
    ) {
        let f = self.v.func;
        let (at, bt) = (f.ty(a).clone(), f.ty(b).clone());
        // Both given transposed: n×m and k×m.
        let (m, n, k) = (at.shape[1], at.shape[0], bt.shape[0]);
        let dim = |d: Dim| Count::Product(vec![d]);
        // Working copies of a and b, which the steps overwrite.
        let aw = self.new_buffer(ElemType::F64, self.len_of(a), BufferRole::Temp);
        self.map_into(a, a, aw);
        let bw = self.new_buffer(ElemType::F64, self.len_of(b), BufferRole::Temp);
        self.map_into(b, b, bw);
        let scale_b = self.materialize(scale);
        let diag = self.new_buffer(ElemType::F64, dim(n), BufferRole::Temp);
        let span = f.span(v);
        let singular = self.error_bit(ErrorClass::Domain, "⌹ of a singular matrix", span.clone());
        let shape = self.error_bit(
            ErrorClass::Domain,
            "⌹ needs at least as many rows as columns",
            span.clone(),
        );
        let range = self.error_bit(ErrorClass::Domain, crate::scalar::not_finite(f.float), span);
        let pushes = |iteration: bool| {
            let mut p = vec![("n", dim(n)), ("m", dim(m)), ("k", dim(k))];
            if iteration {
                p.push(("j", Count::known(0)));
            }
            p
        };
        let mut kb = self.kb();
        let (ab, bb) = (
            kb.bind(aw, ElemType::F64, true),
            kb.bind(bw, ElemType::F64, true),
        );
        let db = kb.bind(diag, ElemType::F64, true);
        let sb = kb.bind(scale_b, ElemType::F64, false);
        self.bind_status(&mut kb, true);
        let groups = Count::Sum(vec![dim(n), dim(k)]);
        self.push_kernel(
            "qr_step",
            KernelKind::QrStep {
                a: ab,
                b: bb,
                diag: db,
                scale: sb,
                singular,
                shape,
            },
            kb,
            pushes(true),
            groups,
        );
        let last = self.plan.dispatches.len() - 1;
        self.plan.dispatches[last].repeat = Some((dim(n), 3));
        let out_b = self.result_or_temp(v, is_result);
        let mut kb = self.kb();
        let (ab, bb) = (
            kb.bind(aw, ElemType::F64, false),
            kb.bind(bw, ElemType::F64, false),
        );
        let db = kb.bind(diag, ElemType::F64, false);
        let ob = kb.bind(out_b, ElemType::F64, true);
        self.bind_status(&mut kb, true);
        self.push_kernel(
            "back_subst",
            KernelKind::BackSubst {
                a: ab,
                b: bb,
                diag: db,
                out: ob,
                limit,
                range,
            },
            kb,
            pushes(false),
            Count::Groups {
                of: Box::new(dim(k)),
                per_group: 1,
                max: u32::MAX,
            },
        );
        self.buffer_of[v.index()] = Some(out_b);
    }
}
