//! Unit tests of `acct_policy` (acct_policy.rs).

use super::*;
use gresim_model::accounting::MAX_TRES;
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

/// A TRES array with a few entries set (at random places, the last
/// ones included) and the rest at `fill`.
fn sparse(fill: u64) -> impl Strategy<Value = TresArray> {
    proptest::collection::vec((0..MAX_TRES, 0u64..40), 0..4).prop_map(move |set| {
        let mut t = [fill; MAX_TRES];
        for (i, v) in set {
            t[i] = v;
        }
        t
    })
}

/// One limit set on a QOS (`field` picks which, `i` the TRES).
fn set_qos_limit(l: &mut QosLimits, field: u8, i: usize, v: u64) {
    let n = v as u32;
    match field % 13 {
        0 => l.grp_tres[i] = v,
        1 => l.grp_tres_run_mins[i] = v,
        2 => l.max_tres_pj[i] = v,
        3 => l.max_tres_pn[i] = v,
        4 => l.max_tres_pu[i] = v,
        5 => l.max_tres_pa[i] = v,
        6 => l.max_tres_mins_pj[i] = v,
        7 => l.min_tres_pj[i] = v,
        8 => l.grp_jobs = n,
        9 => l.max_jobs_pu = n,
        10 => l.max_jobs_pa = n,
        11 => l.max_wall_pj = v,
        _ => l.grp_tres_mins[i] = v,
    }
}

/// One limit set on an association.
fn set_assoc_limit(l: &mut gresim_model::accounting::AssocLimits, field: u8, i: usize, v: u64) {
    match field % 8 {
        0 => l.grp_tres[i] = v,
        1 => l.grp_tres_run_mins[i] = v,
        2 => l.grp_jobs = v as u32,
        3 => l.max_tres_pj[i] = v,
        4 => l.max_tres_pn[i] = v,
        5 => l.max_tres_mins_pj[i] = v,
        6 => l.max_jobs = v as u32,
        _ => l.max_wall_pj = v,
    }
}

/// Limits drawn as (on what, which field, which TRES, value).
fn limits() -> impl Strategy<Value = Vec<(u8, u8, usize, u64)>> {
    proptest::collection::vec((0u8..5, any::<u8>(), 0usize..5, 0u64..60), 0..6)
}

/// A request: small counts of the configured TRES (cpu, mem, node,
/// billing, gres/gpu).
fn request() -> impl Strategy<Value = TresArray> {
    proptest::collection::vec(0u64..10, 5).prop_map(|v| {
        let mut t = [0; MAX_TRES];
        t[..5].copy_from_slice(&v);
        t
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    /// `time_matters` is true whenever the time limit can change an
    /// answer: with random QOS and association limits, usage and
    /// requests, two time limits give the same answers unless it says
    /// so. (`RunnableMemo` keeps answers without the time limit.)
    #[test]
    fn answers_read_the_time_limit_only_where_time_matters(
        lims in limits(),
        over_part: bool,
        part_qos: Option<u16>,
        used in sparse(0),
        run_secs in sparse(0),
        jobs in 0u32..4,
        req in request(),
        tm1 in 0u64..80,
        tm2 in 0u64..80,
    ) {
        let mut acct = Accounting::default();
        acct.add_tres("gres/gpu").map_err(TestCaseError::fail)?;
        acct.qos.push(gresim_model::accounting::Qos::new("second"));
        acct.qos[1].flags.over_part_qos = over_part;
        let account = acct.add_account("a", None);
        let user = acct.add_user("u", account, None);
        for &(on, field, i, v) in &lims {
            match on {
                0 | 1 => set_qos_limit(&mut acct.qos[on as usize].limits, field, i, v),
                2 => set_assoc_limit(&mut acct.assocs[0].limits, field, i, v),
                3 => set_assoc_limit(&mut acct.assocs[account as usize].limits, field, i, v),
                _ => set_assoc_limit(&mut acct.assocs[user as usize].limits, field, i, v),
            }
        }
        let mut usage = AcctUsage::new(&acct);
        let counters = Used { jobs, submit_jobs: jobs, tres: used, tres_run_secs: run_secs };
        for u in usage.assoc.iter_mut().chain(usage.qos.iter_mut()) {
            *u = counters.clone();
        }
        for q in 0..2 {
            usage.qos_user[q].insert("u".into(), counters.clone());
            usage.qos_account[q].insert("a".into(), counters.clone());
        }
        let ja = JobAcct { assoc: user, qos: 1, part_qos: part_qos.map(|q| q % 2) };
        let lim = JobLimits { acct: &acct, usage: &usage, ja, user: "u" };
        if !lim.time_matters() {
            prop_assert_eq!(lim.pre_select(tm1), lim.pre_select(tm2));
            prop_assert_eq!(lim.post_select(&req, tm1), lim.post_select(&req, tm2));
        }
    }
}

proptest! {

    /// The shortcuts (return at once when a limit array sets nothing)
    /// answer as the checks that look at every TRES.
    #[test]
    fn shortcuts_answer_as_the_full_checks(
        nt in 1..=MAX_TRES,
        limit in sparse(NO_LIMIT),
        skip in sparse(NO_LIMIT),
        with_skip: bool,
        req in sparse(0),
        used in sparse(0),
        per_node: bool,
        minimum: bool,
        out in sparse(NO_LIMIT),
    ) {
        let skip = with_skip.then_some(&skip);
        prop_assert_eq!(any_set(&limit), limit.iter().any(|&x| set(x)));
        prop_assert_eq!(
            over_usage(nt, &limit, skip, &req, || used),
            first_over_usage(nt, &limit, skip, &req, &used)
        );
        prop_assert_eq!(
            over_max(nt, &limit, skip, &req, per_node, minimum),
            first_over_max(nt, &limit, skip, &req, per_node, minimum)
        );
        let (mut a, mut b) = (out, out);
        merge(&mut a, &limit);
        merge_all(&mut b, &limit);
        prop_assert_eq!(a, b);
    }
}
