//! How much room a neighbour list gets per atom, shared by the device backends (CUDA and
//! wgpu): sized by the largest count a build saw, or before any build by what a liquid at
//! the system's density holds within the list range.

/// Room per atom in the neighbour list for a largest count of `seen` (a quarter more, plus
/// 16, in whole packs of 8): the list is sized by a counting build when it is set up and grown
/// by the same rule when a rebuild overflows it.
pub fn list_room(seen: usize) -> usize {
    (seen + seen / 4 + 16).div_ceil(8) * 8
}

/// The list room a memory check expects at mean number density `density`: the neighbours
/// within `range` at the larger of it and a liquid's 0.85, a fifth more for the densest atom.
pub fn expected_list_room(range: f64, density: f64) -> usize {
    let mean = 4.0 / 3.0 * std::f64::consts::PI * range.powi(3) * density.max(0.85);
    list_room((mean * 1.2).ceil() as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn list_room_is_whole_packs_with_a_margin_and_the_check_expects_a_liquid() {
        for seen in [0, 1, 7, 78, 104, 500] {
            let room = list_room(seen);
            assert!(room.is_multiple_of(8) && room >= seen + seen / 4 + 16, "{seen}: {room}");
            assert!(room < seen + seen / 4 + 24, "{seen}: {room}");
        }
        // fcc at rho* 0.8442 has 78 neighbours within 2.8: the in.lj list gets 120.
        assert_eq!(list_room(78), 120);
        let liquid = expected_list_room(2.8, 0.8442);
        assert_eq!(expected_list_room(2.8, 0.01), expected_list_room(2.8, 0.85));
        assert!(liquid > list_room(78) && liquid < 160, "{liquid}");
    }
}
