//! The width limits read from an AdmissionReview body without building it: a JSON tree takes 20–30
//! times the text it comes from, so a 3 MB review of a pod listing 70,000 containers would cost about
//! 70 MiB before [`super::check`] could refuse it. The caller runs this first on large bodies.
//!
//! Only `request.object` and `request.oldObject` are walked, and in them only the lists the limits
//! count; everything else is skipped without being stored. A body that is not JSON passes: the
//! review parser reports it.

use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

use super::{Sizes, TooWide};

/// The first limit `request.object` or `request.oldObject` (named in the error) breaks.
pub fn check_body(body: &[u8]) -> Result<(), (&'static str, TooWide)> {
    let mut objects = Objects::default();
    let mut deserializer = serde_json::Deserializer::from_slice(body);
    if Path::Root.deserialize(&mut deserializer, &mut objects).is_err() {
        return Ok(());
    }
    for (which, specs) in [("object", &objects.object), ("oldObject", &objects.old_object)] {
        for (at, sizes) in [("spec", &specs[0]), ("spec.template.spec", &specs[1])] {
            sizes.check(at).map_err(|e| (which, e))?;
        }
    }
    Ok(())
}

/// The sizes found in each object: its `spec` and its `spec.template.spec`.
#[derive(Default)]
struct Objects {
    object: [Sizes; 2],
    old_object: [Sizes; 2],
}

/// Where the walk is, and so which keys it looks into.
#[derive(Clone, Copy)]
enum Path {
    Root,
    Request,
    /// An object (`old`: `oldObject`).
    Object {
        old: bool,
    },
    /// A pod spec (`template`: under `spec.template`).
    Spec {
        old: bool,
        template: bool,
    },
    Template {
        old: bool,
    },
    /// Container `index` of list `list` (0 containers, 1 initContainers, 2 ephemeralContainers).
    Container {
        old: bool,
        template: bool,
        list: usize,
        index: usize,
    },
}

impl Path {
    fn deserialize<'de, D: Deserializer<'de>>(self, d: D, found: &mut Objects) -> Result<(), D::Error> {
        d.deserialize_any(Walk { path: self, found })
    }
}

struct Walk<'a> {
    path: Path,
    found: &'a mut Objects,
}

impl Walk<'_> {
    fn sizes(&mut self, old: bool, template: bool) -> &mut Sizes {
        let specs = if old {
            &mut self.found.old_object
        } else {
            &mut self.found.object
        };
        &mut specs[usize::from(template)]
    }
}

impl<'de> Visitor<'de> for Walk<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(mut self, mut map: A) -> Result<(), A::Error> {
        // env and envFrom entries of a container.
        let mut env = 0;
        while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            let next = match (self.path, key.as_ref()) {
                (Path::Root, "request") => Some(Path::Request),
                (Path::Request, "object") => Some(Path::Object { old: false }),
                (Path::Request, "oldObject") => Some(Path::Object { old: true }),
                (Path::Object { old }, "spec") => Some(Path::Spec { old, template: false }),
                (Path::Spec { old, template: false }, "template") => Some(Path::Template { old }),
                (Path::Template { old }, "spec") => Some(Path::Spec { old, template: true }),
                _ => None,
            };
            if let Some(path) = next {
                map.next_value_seed(Seed {
                    path,
                    found: &mut *self.found,
                })?;
                continue;
            }
            let counted = match (self.path, key.as_ref()) {
                (
                    Path::Spec { old, template },
                    list @ ("containers" | "initContainers" | "ephemeralContainers"),
                ) => {
                    let list = super::LISTS.iter().position(|l| *l == list).unwrap_or(0);
                    let each = Each::Container { old, template, list };
                    let count = map.next_value_seed(Elements {
                        each: Some(each),
                        found: &mut *self.found,
                    })?;
                    self.sizes(old, template).containers += count;
                    true
                }
                (Path::Spec { old, template }, "volumes") => {
                    let count = map.next_value_seed(Elements {
                        each: None,
                        found: &mut *self.found,
                    })?;
                    self.sizes(old, template).volumes = count;
                    true
                }
                (Path::Container { .. }, "env" | "envFrom") => {
                    env += map.next_value_seed(Elements {
                        each: None,
                        found: &mut *self.found,
                    })?;
                    true
                }
                _ => false,
            };
            if !counted {
                map.next_value::<IgnoredAny>()?;
            }
        }
        if let Path::Container {
            old,
            template,
            list,
            index,
        } = self.path
        {
            self.sizes(old, template).container_env(list, index, env);
        }
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(())
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }
}

/// A value to walk at `path`.
struct Seed<'a> {
    path: Path,
    found: &'a mut Objects,
}

impl<'de> DeserializeSeed<'de> for Seed<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        self.path.deserialize(d, self.found)
    }
}

/// The elements of a container list, each walked as a container of that list.
#[derive(Clone, Copy)]
enum Each {
    Container { old: bool, template: bool, list: usize },
}

/// A list to count, each element walked (`each`) or skipped; anything but a list counts 0.
struct Elements<'a> {
    each: Option<Each>,
    found: &'a mut Objects,
}

impl<'de> DeserializeSeed<'de> for Elements<'_> {
    type Value = usize;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<usize, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Elements<'_> {
    type Value = usize;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<usize, A::Error> {
        let mut count = 0;
        loop {
            let more = match self.each {
                Some(Each::Container { old, template, list }) => {
                    let path = Path::Container {
                        old,
                        template,
                        list,
                        index: count,
                    };
                    seq.next_element_seed(Seed {
                        path,
                        found: &mut *self.found,
                    })?
                    .is_some()
                }
                None => seq.next_element::<IgnoredAny>()?.is_some(),
            };
            if !more {
                return Ok(count);
            }
            count += 1;
        }
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<usize, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(0)
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<usize, E> {
        Ok(0)
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<usize, E> {
        Ok(0)
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<usize, E> {
        Ok(0)
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<usize, E> {
        Ok(0)
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<usize, E> {
        Ok(0)
    }
    fn visit_unit<E: de::Error>(self) -> Result<usize, E> {
        Ok(0)
    }
}
