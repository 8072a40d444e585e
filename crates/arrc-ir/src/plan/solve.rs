//! `⌹` on the device (`Inst::Solve`): Householder QR in f64 by panels of columns, two
//! dispatches a panel (`KernelKind::QrStep`, repeated: one workgroup factors the
//! panel, then every later column applies its reflectors), then back substitution
//! (`KernelKind::BackSubst`).

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
    ) -> Result<()> {
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
        // Each reflector's squared norm, for the columns after its panel.
        let taus = self.new_buffer(ElemType::F64, dim(n), BufferRole::Temp);
        let block = self.block_within_trips(v, m, n)?;
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
        let tb = kb.bind(taus, ElemType::F64, true);
        self.bind_status(&mut kb, true);
        let groups = Count::Sum(vec![dim(n), dim(k)]);
        self.push_kernel(
            "qr_step",
            KernelKind::QrStep {
                a: ab,
                b: bb,
                diag: db,
                scale: sb,
                taus: tb,
                block,
                singular,
                shape,
            },
            kb,
            pushes(true),
            groups,
        );
        let last = self.plan.dispatches.len() - 1;
        // Two steps a panel of `block` columns: factor it, then apply it.
        let panels = Count::Groups {
            of: Box::new(dim(n)),
            per_group: block,
            max: u32::MAX,
        };
        self.plan.dispatches[last].repeat = Some((
            Count::Scaled {
                of: Box::new(panels),
                times: 2,
            },
            3,
        ));
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
        Ok(())
    }

    /// The panel's columns (`PlanOptions::qr_block`, at most 16, and as many as
    /// the panel step's workgroup memory holds: 128 partial sums of 8 bytes a
    /// column), fewer where the device cuts loops off (`PlanOptions::
    /// loop_trip_limit`, lavapipe): a panel step makes about 2m÷wg + (subgroups) +
    /// 6 loop trips, a panel of B columns B of them in one invocation, as does
    /// applying its B reflectors, and back substitution n sums of n rows. Where
    /// even one column a panel is more than the device runs, the solve is refused
    /// (the CPU computes it).
    fn block_within_trips(&self, v: Value, m: Dim, n: Dim) -> Result<u32> {
        let shared = (self.opts.max_shared_bytes / (128 * 8)).max(1);
        let block = self.opts.qr_block.clamp(1, 16).min(shared);
        let Some(limit) = self.opts.loop_trip_limit else {
            return Ok(block);
        };
        let wg = u64::from(self.opts.workgroup_size.max(1));
        let groups = wg.div_ceil(u64::from(self.opts.subgroup_size.max(1)));
        let (m, n) = (
            crate::bounds::dim_bound(m).min(u64::MAX as u128) as u64,
            crate::bounds::dim_bound(n).min(u64::MAX as u128) as u64,
        );
        let step = 2 * m.div_ceil(wg) + groups + 6;
        let back = n.saturating_mul(n.div_ceil(wg) + groups + 4);
        let most = back.max(step);
        self.within_trips(most, || format!("⌹ of {n} columns runs about {most}"), v)?;
        Ok((limit / step).clamp(1, u64::from(block)) as u32)
    }
}
