//! Observables computed from state: degrees of freedom, temperature, pressure, and the
//! normalisation of g(r), speed histograms and density profiles.
