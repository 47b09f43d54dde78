//! The signed end of an admission-log run (docs/formats.md, "Admission log"): the guard signs
//! its `guard_stop` when it stops, and `mcppin log verify --pubkey` checks every run's end.
//!
//! The signature is Ed25519 over the RFC 8785 form of the `guard_stop` line's object without
//! its `signature` member ([`mcppin_core::log::Stop::signed_bytes`]), written in base64 as the
//! line's `signature`. The line's `prev` names the digest of the run's line before it, and
//! each of those the one before, back to the `guard_start` that names the lockfile: a valid
//! signature covers the whole run, so a run cut short, extended or edited anywhere no longer
//! ends with one.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use ed25519_dalek::Signer as _;
use mcppin_core::log::{Finding, Kind, Report, Stop};

use crate::key::{PublicKey, SigningKey};

/// The line of a signed `guard_stop`: `stop` signed with `key`, whose fingerprint the run's
/// start announced ([`Stop::key`]).
///
/// # Errors
///
/// [`crate::Error::ForeignKey`] when `key` is not the key the start announced (or none was):
/// the end would not verify, and a verifier reports it as a break.
///
/// # Examples
///
/// ```
/// use mcppin_core::log::{Chain, Start};
/// use mcppin_sign::SigningKey;
///
/// let key = SigningKey::generate(&mut rand_core::OsRng);
/// let (chain, mut file) = Chain::start(&Start {
///     run: "4d2-1",
///     server: "docs",
///     observed_at: "2026-08-01T09:30:00.000Z",
///     guard: "mcppin-guard/0.1.0",
///     transport: "stdio",
///     mode: "refuse",
///     lock_digest: mcppin_core::Digest::of_bytes(b"lock"),
///     approval_serial: 1,
///     lock_key: None,
///     log_key: Some(key.public_key().fingerprint()),
/// });
/// file.extend(mcppin_sign::log::sign(chain.stop("2026-08-01T09:31:00.000Z", 0), &key)?);
///
/// let mut report = mcppin_core::log::verify(&file);
/// mcppin_sign::log::check_ends(&mut report, &[key.public_key()]);
/// assert_eq!(report.exit_code(), 0);
/// assert_eq!(report.runs[0].sealed_by, Some(key.public_key().fingerprint()));
/// # Ok::<(), mcppin_sign::Error>(())
/// ```
pub fn sign(stop: Stop, key: &SigningKey) -> Result<Vec<u8>, crate::Error> {
    let fingerprint = key.public_key().fingerprint();
    if stop.key() != Some(fingerprint) {
        return Err(crate::Error::ForeignKey {
            found: fingerprint,
            expected: stop.key().into_iter().collect(),
        });
    }
    let signature = key.inner().sign(&stop.signed_bytes());
    let text = STANDARD.encode(signature.to_bytes());
    Ok(stop.into_line(Some(&text)))
}

/// Checks the end of every run of `report` against the trusted `keys` and adds what it finds:
/// a run without a `guard_stop` ([`Kind::NotStopped`]), an unsigned one
/// ([`Kind::Unsigned`]) or one signed by another key ([`Kind::ForeignKey`]) cannot be proven
/// complete (exit 3); a signature that does not verify under the trusted key it names is a
/// break ([`Kind::BadSignature`], exit 1). A run whose end verifies gets
/// [`mcppin_core::log::Run::sealed_by`].
///
/// Verification is strict (RFC 8032 section 5.1.7 with canonical `S` and no small-order
/// points), as for lockfile signatures.
pub fn check_ends(report: &mut Report, keys: &[PublicKey]) {
    report.ends_checked = true;
    let mut found = Vec::new();
    for run in &mut report.runs {
        let at = |line: u64, kind: Kind| (line, run.id.clone(), kind);
        let Some(end) = &run.end else {
            found.push(at(run.last_line, Kind::NotStopped));
            continue;
        };
        let (Some(named), Some(text)) = (end.key, &end.signature) else {
            // A signature without a key named is already a break (`Kind::EndMismatch`).
            if end.signature.is_none() {
                found.push(at(end.line, Kind::Unsigned));
            }
            continue;
        };
        let Some(key) = keys.iter().find(|k| k.fingerprint() == named) else {
            let expected = keys.iter().map(PublicKey::fingerprint).collect();
            found.push(at(
                end.line,
                Kind::ForeignKey {
                    found: named,
                    expected,
                },
            ));
            continue;
        };
        let verified = STANDARD
            .decode(text)
            .ok()
            .and_then(|bytes| <[u8; 64]>::try_from(bytes).ok())
            .map(|bytes| ed25519_dalek::Signature::from_bytes(&bytes))
            .is_some_and(|signature| {
                key.verifying_key()
                    .verify_strict(&end.signed, &signature)
                    .is_ok()
            });
        if verified {
            run.sealed_by = Some(named);
        } else {
            found.push(at(end.line, Kind::BadSignature { key: named }));
        }
    }
    for (line, run, kind) in found {
        if kind.is_break()
            && let Some(entry) = report.runs.iter_mut().find(|r| r.id == run)
        {
            entry.broken = true;
        }
        report.push(Finding::new(line, Some(run), kind));
    }
}

#[cfg(test)]
mod tests {
    use mcppin_core::Digest;
    use mcppin_core::log::{Chain, Start, verify};

    use super::*;

    const AT: &str = "2026-08-01T09:30:00.000Z";

    fn key() -> SigningKey {
        SigningKey::from_pem(
            "-----BEGIN PRIVATE KEY-----
MC4CAQAwBQYDK2VwBCIEINTuctv5E1hK1bbY8fdp+K06/nwoy/HU++CXqI9EdVhC
-----END PRIVATE KEY-----
",
        )
        .unwrap()
    }

    fn other_key() -> SigningKey {
        SigningKey::generate(&mut rand_core::OsRng)
    }

    /// A run of two events, its start announcing `announced`, its end as `end` makes it.
    fn run(announced: Option<Digest>, end: impl FnOnce(Stop) -> Vec<u8>) -> Vec<u8> {
        let (mut chain, mut file) = Chain::start(&Start {
            run: "r1",
            server: "docs",
            observed_at: AT,
            guard: "mcppin-guard/0.1.0",
            transport: "stdio",
            mode: "refuse",
            lock_digest: Digest::of_bytes(b"lock"),
            approval_serial: 1,
            lock_key: None,
            log_key: announced,
        });
        for tool in ["a", "b"] {
            let mut event = mcppin_core::Object::new();
            event.insert("event", "tool_admission");
            event.insert("tool", tool);
            file.extend(chain.append(AT, event));
        }
        file.extend(end(chain.stop(AT, 0)));
        file
    }

    fn signed() -> Vec<u8> {
        let key = key();
        run(Some(key.public_key().fingerprint()), |stop| {
            sign(stop, &key).unwrap()
        })
    }

    fn checked(bytes: &[u8], keys: &[PublicKey]) -> Report {
        let mut report = verify(bytes);
        check_ends(&mut report, keys);
        report
    }

    fn kinds(report: &Report) -> Vec<(u64, Kind)> {
        report
            .findings
            .iter()
            .map(|f| (f.line, f.kind.clone()))
            .collect()
    }

    #[test]
    fn a_signed_end_proves_the_run() {
        let report = checked(&signed(), &[other_key().public_key(), key().public_key()]);
        assert_eq!(kinds(&report), []);
        assert_eq!(report.exit_code(), 0);
        assert_eq!(
            report.runs[0].sealed_by,
            Some(key().public_key().fingerprint())
        );
        assert!(report.to_text().contains("(verified)"));
    }

    #[test]
    fn a_forged_signature_is_a_break() {
        // The end re-signed by another key under the announced fingerprint.
        let key = key();
        let forger = other_key();
        let bytes = run(Some(key.public_key().fingerprint()), |stop| {
            let signature = forger.inner().sign(&stop.signed_bytes());
            stop.into_line(Some(&STANDARD.encode(signature.to_bytes())))
        });
        let report = checked(&bytes, &[key.public_key()]);
        assert_eq!(
            kinds(&report),
            [(
                4,
                Kind::BadSignature {
                    key: key.public_key().fingerprint()
                }
            )]
        );
        assert_eq!(report.exit_code(), 1);
        let not_base64 = run(Some(key.public_key().fingerprint()), |stop| {
            stop.into_line(Some("not base64!"))
        });
        assert_eq!(checked(&not_base64, &[key.public_key()]).exit_code(), 1);
    }

    #[test]
    fn a_changed_exit_code_in_the_signed_end_is_a_break() {
        let text = String::from_utf8(signed()).unwrap();
        let changed = text.replace("\"exit_code\":0", "\"exit_code\":1");
        assert_ne!(changed, text);
        let report = checked(changed.as_bytes(), &[key().public_key()]);
        assert!(matches!(
            &kinds(&report)[..],
            [(4, Kind::BadSignature { .. })]
        ));
    }

    #[test]
    fn a_run_cut_between_lines_is_not_proven() {
        // The tail a chain alone cannot show gone: dropped with its signed end.
        let bytes = signed();
        let lines: Vec<&[u8]> = bytes.split_inclusive(|&b| b == b'\n').collect();
        let cut = lines[..3].concat();
        assert_eq!(verify(&cut).exit_code(), 0, "the chain alone holds");
        let report = checked(&cut, &[key().public_key()]);
        assert_eq!(kinds(&report), [(3, Kind::NotStopped)]);
        assert_eq!(report.exit_code(), 3);
    }

    #[test]
    fn an_unsigned_end_is_not_proven() {
        let report = checked(
            &run(None, |stop| stop.into_line(None)),
            &[key().public_key()],
        );
        assert_eq!(kinds(&report), [(4, Kind::Unsigned)]);
        assert_eq!(report.exit_code(), 3);
    }

    #[test]
    fn an_end_signed_by_a_key_not_given_is_not_proven() {
        let other = other_key().public_key();
        let report = checked(&signed(), std::slice::from_ref(&other));
        assert_eq!(
            kinds(&report),
            [(
                4,
                Kind::ForeignKey {
                    found: key().public_key().fingerprint(),
                    expected: vec![other.fingerprint()]
                }
            )]
        );
        assert_eq!(report.exit_code(), 3);
    }

    #[test]
    fn a_signed_end_lifted_onto_another_run_breaks_it() {
        // Two runs that differ in one event: the end of one, signature and all, after the
        // lines of the other.
        let key = key();
        let a = signed();
        let b = {
            let text = String::from_utf8(a.clone()).unwrap();
            text.replacen("\"tool\":\"a\"", "\"tool\":\"x\"", 1)
        };
        let a_lines: Vec<&[u8]> = a.split_inclusive(|&b| b == b'\n').collect();
        let b_lines: Vec<&[u8]> = b.as_bytes().split_inclusive(|&b| b == b'\n').collect();
        let mut spliced = b_lines[..3].concat();
        spliced.extend_from_slice(a_lines[3]);
        let report = checked(&spliced, &[key.public_key()]);
        assert_eq!(report.exit_code(), 1, "{}", report.to_text());
    }

    #[test]
    fn only_the_announced_key_signs() {
        let key = key();
        let (chain, _) = Chain::start(&Start {
            run: "r1",
            server: "docs",
            observed_at: AT,
            guard: "g",
            transport: "stdio",
            mode: "refuse",
            lock_digest: Digest::of_bytes(b"lock"),
            approval_serial: 1,
            lock_key: None,
            log_key: None,
        });
        assert!(matches!(
            sign(chain.stop(AT, 0), &key),
            Err(crate::Error::ForeignKey { .. })
        ));
    }
}
