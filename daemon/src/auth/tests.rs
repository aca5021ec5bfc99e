use super::*;
use spur_proto::token::{Claims, mint};

fn auth(plugin: AuthPlugin, mode: AuthMode) -> Authenticator {
    Authenticator { plugin, mode, key: Some(b"k".to_vec()), munge: None, agent_uid: None }
}

fn headers(pairs: &[(&str, &str)]) -> http::HeaderMap {
    let mut h = http::HeaderMap::new();
    for (k, v) in pairs {
        h.insert(http::HeaderName::from_bytes(k.as_bytes()).unwrap(), v.parse().unwrap());
    }
    h
}

fn bearer(exp_offset: i64) -> String {
    let now = chrono::Utc::now().timestamp();
    let c = Claims {
        sub: "alice".into(),
        uid: Some(5),
        admin_level: "Operator".into(),
        iat: now,
        exp: now + exp_offset,
    };
    format!("Bearer {}", mint(b"k", &c).unwrap())
}

#[test]
fn required_refuses_missing_expired_and_forged() {
    let a = auth(AuthPlugin::Jwt, AuthMode::Required);
    assert_eq!(a.authenticate(&headers(&[]), "p".into()).unwrap_err().to_string(), "authentication required");
    let expired = bearer(-5);
    assert_eq!(
        a.authenticate(&headers(&[("authorization", &expired)]), "p".into()).unwrap_err().to_string(),
        "token expired"
    );
    let forged = headers(&[("authorization", "Bearer abc.def.ghi")]);
    assert_eq!(a.authenticate(&forged, "p".into()).unwrap_err().to_string(), "invalid token");
    let good = bearer(60);
    let c =
        a.authenticate(&headers(&[("authorization", &good), (USER_HEADER, "mallory")]), "p".into()).unwrap();
    assert_eq!((c.user.as_str(), c.verified, c.uid), ("alice", true, None));
}

#[test]
fn permissive_uses_the_asserted_name_and_a_token_wins() {
    let a = auth(AuthPlugin::Jwt, AuthMode::Permissive);
    let c = a.authenticate(&headers(&[(USER_HEADER, "bob")]), "p".into()).unwrap();
    assert_eq!((c.user.as_str(), c.verified), ("bob", false));
    let good = bearer(60);
    let c = a.authenticate(&headers(&[("authorization", &good), (USER_HEADER, "bob")]), "p".into()).unwrap();
    assert_eq!(c.user, "alice");
}

#[test]
fn roles_come_from_adminlevel_claims_and_root() {
    let mut cat = Catalog::default();
    cat.users.insert(
        "op".into(),
        crate::model::User { name: "op".into(), admin_level: Role::Operator, ..Default::default() },
    );
    let a = auth(AuthPlugin::None, AuthMode::Permissive);
    let caller =
        |user: &str, uid: Option<u32>| Caller { user: user.into(), asserted_uid: uid, ..Caller::default() };
    assert_eq!(a.role(&caller("op", Some(1000)), &cat), Role::Operator);
    assert_eq!(a.role(&caller("nobody", Some(1000)), &cat), Role::None);
    assert_eq!(a.role(&caller("root", Some(0)), &cat), Role::Administrator);
    let jwt = auth(AuthPlugin::Jwt, AuthMode::Permissive);
    assert_eq!(
        jwt.role(&caller("root", Some(0)), &cat),
        Role::None,
        "uid 0 is trusted only under plugin none"
    );
}
