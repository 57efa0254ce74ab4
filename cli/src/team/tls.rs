//! TLS for the team connection, with libpq's `sslmode` meanings so that a connection string
//! that works with `psql` works here:
//!
//! - `disable`: plain TCP.
//! - `prefer` (the default): TLS when the server offers it, plain otherwise.
//! - `require`: TLS or no connection.
//! - `verify-ca`: TLS, and the server's certificate must chain to a trusted authority.
//! - `verify-full`: as `verify-ca`, and the certificate must name the host connected to.
//!
//! The trusted authorities are the CA file (`sslrootcert` in the connection string, libpq's
//! `PGSSLROOTCERT`, or the `MEMCTL_TEAM_CA_FILE` setting) when one is given, else Mozilla's
//! roots compiled in (`webpki-roots`). As libpq does when a root certificate is present,
//! `prefer` and `require` also check the chain when a CA file is configured; without one they
//! only encrypt (libpq's behaviour: use `verify-full` to be safe from a man in the middle).
//!
//! rustls with the `ring` provider: pure Rust, nothing to install on the machine.

use anyhow::{Context, Result, bail};
use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::WebPkiSupportedAlgorithms;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{
    CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme,
};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// libpq's `sslmode` values (rust-postgres itself knows only the first three).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SslMode {
    Disable,
    #[default]
    Prefer,
    Require,
    VerifyCa,
    VerifyFull,
}

impl SslMode {
    pub fn parse(s: &str) -> Result<Self> {
        Ok(match s {
            "disable" => Self::Disable,
            "prefer" => Self::Prefer,
            "require" => Self::Require,
            "verify-ca" => Self::VerifyCa,
            "verify-full" => Self::VerifyFull,
            other => bail!(
                "sslmode={other}: memctl supports disable, prefer, require, verify-ca, verify-full"
            ),
        })
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Disable => "disable",
            Self::Prefer => "prefer",
            Self::Require => "require",
            Self::VerifyCa => "verify-ca",
            Self::VerifyFull => "verify-full",
        }
    }

    /// What rust-postgres is told: whether TLS is attempted and whether it is mandatory.
    pub fn postgres(self) -> postgres::config::SslMode {
        match self {
            Self::Disable => postgres::config::SslMode::Disable,
            Self::Prefer => postgres::config::SslMode::Prefer,
            Self::Require | Self::VerifyCa | Self::VerifyFull => postgres::config::SslMode::Require,
        }
    }
}

/// The TLS half of a team connection.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TlsOptions {
    pub mode: SslMode,
    /// PEM certificates of the authorities to trust instead of Mozilla's roots.
    pub ca_file: Option<PathBuf>,
}

impl TlsOptions {
    /// Words for messages: `sslmode=verify-full, CA file /x/ca.crt`.
    pub fn describe(&self) -> String {
        match &self.ca_file {
            Some(f) => format!("sslmode={}, CA file {}", self.mode.as_str(), f.display()),
            None => format!("sslmode={}", self.mode.as_str()),
        }
    }

    /// The rustls client configuration, or None for `disable` (plain connection).
    pub fn client_config(&self) -> Result<Option<ClientConfig>> {
        if self.mode == SslMode::Disable {
            return Ok(None);
        }
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let builder = ClientConfig::builder_with_provider(provider.clone())
            .with_safe_default_protocol_versions()
            .context("TLS protocol versions")?;
        let roots = match &self.ca_file {
            Some(f) => Some(load_roots(f)?),
            None if matches!(self.mode, SslMode::VerifyCa | SslMode::VerifyFull) => Some(
                RootCertStore::from_iter(webpki_roots::TLS_SERVER_ROOTS.iter().cloned()),
            ),
            None => None,
        };
        let Some(roots) = roots else {
            // prefer/require with no CA file: encrypt without checking (libpq's meaning).
            let verifier = EncryptOnly(provider.signature_verification_algorithms);
            return Ok(Some(
                builder
                    .dangerous()
                    .with_custom_certificate_verifier(Arc::new(verifier))
                    .with_no_client_auth(),
            ));
        };
        let webpki = WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider)
            .build()
            .context("building the TLS certificate verifier")?;
        let config = if self.mode == SslMode::VerifyFull {
            builder.with_webpki_verifier(webpki).with_no_client_auth()
        } else {
            builder
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(ChainOnly(webpki)))
                .with_no_client_auth()
        };
        Ok(Some(config))
    }
}

/// The certificates of a PEM file, refusing a file with none (a wrong path or a key file
/// would otherwise silently trust nothing and fail later with a vaguer message).
fn load_roots(path: &Path) -> Result<RootCertStore> {
    let certs = CertificateDer::pem_file_iter(path)
        .with_context(|| format!("reading the CA file {}", path.display()))?
        .collect::<Result<Vec<_>, _>>()
        .with_context(|| format!("the CA file {} is not PEM certificates", path.display()))?;
    if certs.is_empty() {
        bail!("the CA file {} holds no certificate", path.display());
    }
    let mut roots = RootCertStore::empty();
    for c in certs {
        roots.add(c).with_context(|| {
            format!("a certificate of {} is not usable as a CA", path.display())
        })?;
    }
    Ok(roots)
}

/// `verify-ca`: the chain is checked, the name in the certificate is not.
#[derive(Debug)]
struct ChainOnly(Arc<WebPkiServerVerifier>);

impl ServerCertVerifier for ChainOnly {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        match self
            .0
            .verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
        {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_verify_schemes()
    }
}

/// `prefer`/`require` without a CA file: the handshake's signatures are checked (the session
/// is encrypted with the key of the certificate presented), the certificate itself is not.
#[derive(Debug)]
struct EncryptOnly(WebPkiSupportedAlgorithms);

impl ServerCertVerifier for EncryptOnly {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.0)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.0)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_schemes()
    }
}

/// Take libpq's `sslmode` and `sslrootcert` out of a connection string (URL or `key=value`
/// form), since rust-postgres refuses `verify-ca`/`verify-full` and does not know
/// `sslrootcert`. Returns the rest of the string and the two values.
pub fn split_options(conn: &str) -> Result<(String, Option<SslMode>, Option<PathBuf>)> {
    let conn = conn.trim();
    let mut mode = None;
    let mut root = None;
    let mut take = |key: &str, value: String| -> Result<bool> {
        match key {
            "sslmode" => mode = Some(SslMode::parse(&value)?),
            "sslrootcert" => root = Some(PathBuf::from(value)),
            _ => return Ok(false),
        }
        Ok(true)
    };
    if conn.starts_with("postgres://") || conn.starts_with("postgresql://") {
        let Some((base, query)) = conn.split_once('?') else {
            return Ok((conn.to_string(), None, None));
        };
        let mut kept = Vec::new();
        for pair in query.split('&') {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            if !take(k, percent_decode(v))? {
                kept.push(pair);
            }
        }
        let rest = if kept.is_empty() {
            base.to_string()
        } else {
            format!("{base}?{}", kept.join("&"))
        };
        return Ok((rest, mode, root));
    }
    // key=value form: a value with spaces is quoted ('...'); ours never need to be, and
    // everything else is left for rust-postgres to parse.
    let mut kept = Vec::new();
    for word in conn.split_whitespace() {
        let taken = match word.split_once('=') {
            Some((k, v)) => take(k.trim(), v.trim_matches('\'').to_string())?,
            None => false,
        };
        if !taken {
            kept.push(word);
        }
    }
    Ok((kept.join(" "), mode, root))
}

/// `%2F` → `/` in a URL's query value (a CA path in a URL is percent-encoded).
fn percent_decode(v: &str) -> String {
    let b = v.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        if b[i] == b'%'
            && let (Some(h), Some(l)) = (
                b.get(i + 1).and_then(|c| hex(*c)),
                b.get(i + 2).and_then(|c| hex(*c)),
            )
        {
            out.push((h * 16 + l) as u8);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sslmode_and_rootcert_are_taken_from_both_forms() {
        let (rest, m, r) = split_options(
            "postgresql://a@h:5/db?connect_timeout=3&sslmode=verify-full&sslrootcert=%2Fx%2Fca.pem",
        )
        .unwrap();
        assert_eq!(rest, "postgresql://a@h:5/db?connect_timeout=3");
        assert_eq!(m, Some(SslMode::VerifyFull));
        assert_eq!(r, Some(PathBuf::from("/x/ca.pem")));
        let (rest, m, r) = split_options("host=h user=a sslmode=verify-ca dbname=d").unwrap();
        assert_eq!(rest, "host=h user=a dbname=d");
        assert_eq!(m, Some(SslMode::VerifyCa));
        assert_eq!(r, None);
        let (rest, m, _) = split_options("postgresql://a@h/db").unwrap();
        assert_eq!((rest.as_str(), m), ("postgresql://a@h/db", None));
        let e = split_options("postgresql://a@h/db?sslmode=allow").unwrap_err();
        assert!(e.to_string().contains("verify-full"), "{e}");
    }

    #[test]
    fn a_ca_file_without_certificates_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("ca.pem");
        std::fs::write(&f, "not a certificate\n").unwrap();
        let o = TlsOptions {
            mode: SslMode::VerifyFull,
            ca_file: Some(f),
        };
        let e = format!("{:#}", o.client_config().unwrap_err());
        assert!(e.contains("holds no certificate"), "{e}");
        let missing = TlsOptions {
            mode: SslMode::Require,
            ca_file: Some(dir.path().join("nope.pem")),
        };
        assert!(missing.client_config().is_err());
        assert!(TlsOptions::default().client_config().unwrap().is_some());
        let off = TlsOptions {
            mode: SslMode::Disable,
            ca_file: None,
        };
        assert!(off.client_config().unwrap().is_none());
    }
}
