//! Small serde helpers mirroring Go's `omitempty` on plain scalars.

#[allow(clippy::trivially_copy_pass_by_ref)]
pub(crate) fn is_false(v: &bool) -> bool {
    !*v
}

#[allow(clippy::trivially_copy_pass_by_ref)]
pub(crate) fn is_zero_i32(v: &i32) -> bool {
    *v == 0
}

#[allow(clippy::trivially_copy_pass_by_ref)]
pub(crate) fn is_zero_i64(v: &i64) -> bool {
    *v == 0
}
