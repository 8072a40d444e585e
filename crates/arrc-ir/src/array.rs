//! Array values: element types, shapes and data in ravel order.

use arrc_syntax::lexer::Num;
use serde::Serialize;
use std::sync::Arc;

/// Element type of an array. The numeric tower is bool → i32 → i64 → f32 → f64; a
/// program's floats are f32 unless it asks for f64 (`⎕FR←645`, `--float f64`).
/// Characters (Unicode code points) are outside the tower: an array of characters
/// and numbers together (Dyalog's mixed arrays) is not supported yet, so no
/// conversion between the two is ever a value's (see [`ElemType::mixes`]).
/// `Mixed` is the type of an array whose items are of more than one kind: numbers and
/// characters together, or enclosed arrays (a nested array): its data holds [`Item`]s.
/// It lives on the reference only; the GPU path refuses it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, PartialOrd, Ord)]
#[serde(rename_all = "lowercase")]
pub enum ElemType {
    /// Booleans (0 and 1).
    Bool,
    #[default]
    /// 32-bit integers.
    I32,
    /// 64-bit integers.
    I64,
    /// 32-bit floats (the default session).
    F32,
    /// 64-bit floats (`⎕FR←645`).
    F64,
    /// Unicode characters (code points).
    Char,
    /// Items of more than one kind, or enclosed arrays.
    Mixed,
}

impl ElemType {
    /// Its name: `bool i32 i64 f32 f64 char mixed`.
    pub fn name(self) -> &'static str {
        match self {
            ElemType::Bool => "bool",
            ElemType::I32 => "i32",
            ElemType::I64 => "i64",
            ElemType::F32 => "f32",
            ElemType::F64 => "f64",
            ElemType::Char => "char",
            ElemType::Mixed => "mixed",
        }
    }

    /// The type of a name [`ElemType::name`] gives.
    pub fn parse(s: &str) -> Option<ElemType> {
        match s {
            "bool" => Some(ElemType::Bool),
            "i32" => Some(ElemType::I32),
            "i64" => Some(ElemType::I64),
            "f32" => Some(ElemType::F32),
            "f64" => Some(ElemType::F64),
            "char" => Some(ElemType::Char),
            "mixed" => Some(ElemType::Mixed),
            _ => None,
        }
    }

    /// Bytes per element (a mixed array's items are never in a device buffer: 8, the
    /// size of a reference to one).
    pub fn size(self) -> usize {
        match self {
            ElemType::Bool | ElemType::I32 | ElemType::F32 | ElemType::Char => 4,
            ElemType::I64 | ElemType::F64 | ElemType::Mixed => 8,
        }
    }

    /// Whether it is an integer type (booleans too).
    pub fn is_int(self) -> bool {
        matches!(self, ElemType::Bool | ElemType::I32 | ElemType::I64)
    }

    /// Whether it is the character type.
    pub fn is_char(self) -> bool {
        self == ElemType::Char
    }

    /// Numbers (of any width): what the GPU path and arithmetic take.
    pub fn is_number(self) -> bool {
        self.is_int() || self.is_float()
    }

    /// Items of more than one kind, enclosed arrays among them perhaps (see [`Item`]).
    pub fn is_mixed(self) -> bool {
        self == ElemType::Mixed
    }

    /// Whether one is characters and the other numbers: the two join only as a mixed
    /// array ([`ElemType::Mixed`]), and every function that would make one checks this.
    pub fn mixes(self, other: ElemType) -> bool {
        self.is_char() != other.is_char() && !self.is_mixed() && !other.is_mixed()
    }

    /// Whether it is a float type.
    pub fn is_float(self) -> bool {
        matches!(self, ElemType::F32 | ElemType::F64)
    }

    /// The float type `⎕FR←fr` selects: 645 (Dyalog's binary64) or 32 (arrc's f32).
    pub fn from_fr(fr: i64) -> Option<ElemType> {
        match fr {
            645 => Some(ElemType::F64),
            32 => Some(ElemType::F32),
            _ => None,
        }
    }

    /// The value of `⎕FR` when this is the float type.
    pub fn fr(self) -> i32 {
        if self == ElemType::F64 {
            645
        } else {
            32
        }
    }

    /// The smallest type that holds both: up the tower, characters with characters,
    /// and `Mixed` for characters with numbers or anything with `Mixed`.
    pub fn join(self, other: ElemType) -> ElemType {
        if self.mixes(other) {
            ElemType::Mixed
        } else {
            self.max(other)
        }
    }
}

impl std::fmt::Display for ElemType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// One element.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Scalar {
    /// A boolean.
    Bool(bool),
    /// A 32-bit integer.
    I32(i32),
    /// A 64-bit integer.
    I64(i64),
    /// A 32-bit float.
    F32(f32),
    /// A 64-bit float.
    F64(f64),
    /// A character.
    Char(char),
}

impl Scalar {
    /// Its element type.
    pub fn elem_type(self) -> ElemType {
        match self {
            Scalar::Bool(_) => ElemType::Bool,
            Scalar::I32(_) => ElemType::I32,
            Scalar::I64(_) => ElemType::I64,
            Scalar::F32(_) => ElemType::F32,
            Scalar::F64(_) => ElemType::F64,
            Scalar::Char(_) => ElemType::Char,
        }
    }

    /// The number, NaN for a character (which is no number: arithmetic on it fails).
    pub fn as_f64(self) -> f64 {
        match self {
            Scalar::Bool(v) => v as u8 as f64,
            Scalar::I32(v) => v as f64,
            Scalar::I64(v) => v as f64,
            Scalar::F32(v) => v as f64,
            Scalar::F64(v) => v,
            Scalar::Char(_) => f64::NAN,
        }
    }

    /// The integer value, if this is an integer or an integral float.
    pub fn as_i64(self) -> Option<i64> {
        match self {
            Scalar::Bool(v) => Some(v as i64),
            Scalar::I32(v) => Some(v as i64),
            Scalar::I64(v) => Some(v),
            Scalar::F32(v) if v.fract() == 0.0 && v.abs() < 9.0e18 => Some(v as i64),
            Scalar::F64(v) if v.fract() == 0.0 && v.abs() < 9.0e18 => Some(v as i64),
            Scalar::F32(_) | Scalar::F64(_) | Scalar::Char(_) => None,
        }
    }

    /// Converts up (or across) the tower to `ty`. Converting down keeps the low bits;
    /// callers convert down only values known to fit. A number made a character is
    /// the blank (the fill of a character array: `0` cast is how fills are made); a
    /// character made a number is its code point (never a value's: see
    /// [`ElemType::mixes`]).
    pub fn cast(self, ty: ElemType) -> Scalar {
        match (self, ty) {
            (s, ElemType::Mixed) => s,
            (Scalar::Char(c), ElemType::Char) => Scalar::Char(c),
            (_, ElemType::Char) => Scalar::Char(' '),
            (Scalar::Char(c), ElemType::Bool) => Scalar::Bool(c != '\0'),
            (Scalar::Char(c), ElemType::I32) => Scalar::I32(c as i32),
            (Scalar::Char(c), ElemType::I64) => Scalar::I64(c as i64),
            (Scalar::Bool(v), ElemType::Bool) => Scalar::Bool(v),
            (s, ElemType::Bool) => Scalar::Bool(s.as_f64() != 0.0),
            (Scalar::Bool(v), ElemType::I32) => Scalar::I32(v as i32),
            (Scalar::Bool(v), ElemType::I64) => Scalar::I64(v as i64),
            (Scalar::I32(v), ElemType::I32) => Scalar::I32(v),
            (Scalar::I32(v), ElemType::I64) => Scalar::I64(v as i64),
            (Scalar::I64(v), ElemType::I64) => Scalar::I64(v),
            (Scalar::I64(v), ElemType::I32) => Scalar::I32(v as i32),
            (Scalar::F32(v), ElemType::I32) => Scalar::I32(v as i32),
            (Scalar::F32(v), ElemType::I64) => Scalar::I64(v as i64),
            (Scalar::F64(v), ElemType::I32) => Scalar::I32(v as i32),
            (Scalar::F64(v), ElemType::I64) => Scalar::I64(v as i64),
            (s, ElemType::F32) => Scalar::F32(s.as_f64() as f32),
            (s, ElemType::F64) => Scalar::F64(s.as_f64()),
        }
    }

    /// A float of type `ty` (f32 or f64).
    pub fn float(v: f64, ty: ElemType) -> Scalar {
        if ty == ElemType::F64 {
            Scalar::F64(v)
        } else {
            Scalar::F32(v as f32)
        }
    }

    /// The number a literal denotes, typed as APL would store it: integral values that
    /// fit are integers, others floats of the program's float type `float`.
    pub fn from_literal(v: Num, float: ElemType) -> Scalar {
        match v {
            Num::Int(i) => match i32::try_from(i) {
                Ok(i) => Scalar::I32(i),
                Err(_) => Scalar::I64(i),
            },
            Num::Float(v) if v.fract() == 0.0 && v >= i32::MIN as f64 && v <= i32::MAX as f64 => {
                Scalar::I32(v as i32)
            }
            Num::Float(v) if v.fract() == 0.0 && v.abs() < 9.0e15 => Scalar::I64(v as i64),
            Num::Float(v) => Scalar::float(v, float),
        }
    }
}

/// An item of a mixed or nested array: a simple scalar (a number or a character), or
/// an enclosed array. An enclosure of a simple scalar is the scalar itself, so
/// `Boxed` never holds one ([`Item::enclose`] keeps this).
#[derive(Clone, Debug, PartialEq)]
pub enum Item {
    /// A simple scalar.
    Simple(Scalar),
    /// An enclosed array (never a simple scalar).
    Boxed(Arc<Array>),
}

impl Serialize for Item {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Item::Simple(v) => v.serialize(s),
            Item::Boxed(a) => a.serialize(s),
        }
    }
}

impl Item {
    /// `⊂a` as an item: a simple scalar stays itself.
    pub fn enclose(a: Array) -> Item {
        match (a.rank(), &a.data) {
            (0, Data::Mixed(items)) if matches!(items[0], Item::Simple(_)) => items[0].clone(),
            (0, Data::Mixed(_)) => Item::Boxed(Arc::new(a)),
            (0, d) => Item::Simple(d.get(0)),
            _ => Item::Boxed(Arc::new(a)),
        }
    }

    /// The array this item holds (`⊃⊂a`): a simple scalar as a scalar array.
    pub fn open(&self) -> Array {
        match self {
            Item::Simple(s) => Array::scalar(*s),
            Item::Boxed(a) => (**a).clone(),
        }
    }

    /// The array this item holds, borrowed where it is one.
    pub fn as_array(&self) -> std::borrow::Cow<'_, Array> {
        match self {
            Item::Simple(s) => std::borrow::Cow::Owned(Array::scalar(*s)),
            Item::Boxed(a) => std::borrow::Cow::Borrowed(&**a),
        }
    }

    /// The simple scalar, if this is one.
    pub fn simple(&self) -> Option<Scalar> {
        match self {
            Item::Simple(s) => Some(*s),
            Item::Boxed(_) => None,
        }
    }

    /// The prototype of this item (what fills, expand and reshape of an empty array
    /// take): 0 for a number, a blank for a character, and for an enclosed array the
    /// same structure with each of its items' prototypes.
    pub fn prototype(&self) -> Item {
        match self {
            Item::Simple(s) => Item::Simple(Scalar::I32(0).cast(s.elem_type())),
            Item::Boxed(a) => Item::Boxed(Arc::new(a.prototype_array())),
        }
    }

    /// The type this item would have in a simple array: its scalar's, or `Mixed`.
    pub fn elem_type(&self) -> ElemType {
        match self {
            Item::Simple(s) => s.elem_type(),
            Item::Boxed(_) => ElemType::Mixed,
        }
    }
}

/// The elements of an array in ravel order.
#[derive(Clone, Debug, PartialEq)]
pub enum Data {
    /// Booleans.
    Bool(Vec<bool>),
    /// 32-bit integers.
    I32(Vec<i32>),
    /// 64-bit integers.
    I64(Vec<i64>),
    /// 32-bit floats.
    F32(Vec<f32>),
    /// 64-bit floats.
    F64(Vec<f64>),
    /// Characters.
    Char(Vec<char>),
    /// Items of more than one kind (see [`Item`]). Arrays keep this only when the
    /// items are not all numbers or all characters ([`Array::new`] makes those simple),
    /// or when there are none (then [`Items::prototype`] says what the array is made of).
    Mixed(Items),
}

/// The items of a mixed or nested array, and, for an empty one, its prototype: the
/// item that fills, `⊃`, `≡` and `f¨` take in place of a first item there is not
/// (`0⍴⊂1 2` is made of `⊂0 0`). Reads and writes as a `Vec<Item>`.
#[derive(Clone, Debug, Default)]
pub struct Items {
    items: Vec<Item>,
    /// Kept while `items` is empty; `None` where it was never known.
    proto: Option<Box<Item>>,
}

impl Items {
    /// No items, made of `proto`'s prototype.
    pub fn empty_of(proto: &Item) -> Items {
        Items {
            items: Vec::new(),
            proto: Some(Box::new(proto.prototype())),
        }
    }

    /// The prototype of these items: the first's, or the one kept for none.
    pub fn prototype(&self) -> Option<Item> {
        match self.items.first() {
            Some(first) => Some(first.prototype()),
            None => self.proto.as_deref().cloned(),
        }
    }
}

impl std::ops::Deref for Items {
    type Target = Vec<Item>;
    fn deref(&self) -> &Vec<Item> {
        &self.items
    }
}

impl std::ops::DerefMut for Items {
    fn deref_mut(&mut self) -> &mut Vec<Item> {
        &mut self.items
    }
}

impl From<Vec<Item>> for Items {
    fn from(items: Vec<Item>) -> Items {
        Items { items, proto: None }
    }
}

impl FromIterator<Item> for Items {
    fn from_iter<I: IntoIterator<Item = Item>>(iter: I) -> Items {
        Items::from(iter.into_iter().collect::<Vec<_>>())
    }
}

impl<'a> IntoIterator for &'a Items {
    type Item = &'a Item;
    type IntoIter = std::slice::Iter<'a, Item>;
    fn into_iter(self) -> Self::IntoIter {
        self.items.iter()
    }
}

impl IntoIterator for Items {
    type Item = Item;
    type IntoIter = std::vec::IntoIter<Item>;
    fn into_iter(self) -> Self::IntoIter {
        self.items.into_iter()
    }
}

/// Two empty item lists are equal when their prototypes are (as `≡` compares empty
/// arrays); others by their items.
impl PartialEq for Items {
    fn eq(&self, other: &Items) -> bool {
        self.items == other.items && (!self.items.is_empty() || self.proto == other.proto)
    }
}

impl Serialize for Items {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(&self.items)
    }
}

/// Serialized as a plain list of numbers (booleans as 0 and 1), characters as
/// one-character strings.
impl Serialize for Data {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Data::Bool(v) => s.collect_seq(v.iter().map(|b| *b as u8)),
            Data::I32(v) => s.collect_seq(v),
            Data::I64(v) => s.collect_seq(v),
            Data::F32(v) => s.collect_seq(v),
            Data::F64(v) => s.collect_seq(v),
            Data::Char(v) => s.collect_seq(v),
            Data::Mixed(v) => v.serialize(s),
        }
    }
}

impl Data {
    /// The element count.
    pub fn len(&self) -> usize {
        match self {
            Data::Bool(v) => v.len(),
            Data::I32(v) => v.len(),
            Data::I64(v) => v.len(),
            Data::F32(v) => v.len(),
            Data::F64(v) => v.len(),
            Data::Char(v) => v.len(),
            Data::Mixed(v) => v.len(),
        }
    }

    /// Whether there are no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Its element type.
    pub fn elem_type(&self) -> ElemType {
        match self {
            Data::Bool(_) => ElemType::Bool,
            Data::I32(_) => ElemType::I32,
            Data::I64(_) => ElemType::I64,
            Data::F32(_) => ElemType::F32,
            Data::F64(_) => ElemType::F64,
            Data::Char(_) => ElemType::Char,
            Data::Mixed(_) => ElemType::Mixed,
        }
    }

    /// The first element that is a NaN or an infinity (APL has neither): only floats
    /// can hold one.
    pub fn first_not_finite(&self) -> Option<usize> {
        match self {
            Data::F32(v) => v.iter().position(|x| !x.is_finite()),
            Data::F64(v) => v.iter().position(|x| !x.is_finite()),
            _ => None,
        }
    }

    /// Element `i` as a simple scalar. An enclosed item of a nested array is no
    /// scalar: it reads as NaN, which no function takes as an integer, a boolean or a
    /// character (functions that may see one read [`Data::item`]; the interpreter
    /// hands nested arrays only to those).
    pub fn get(&self, i: usize) -> Scalar {
        match self {
            Data::Bool(v) => Scalar::Bool(v[i]),
            Data::I32(v) => Scalar::I32(v[i]),
            Data::I64(v) => Scalar::I64(v[i]),
            Data::F32(v) => Scalar::F32(v[i]),
            Data::F64(v) => Scalar::F64(v[i]),
            Data::Char(v) => Scalar::Char(v[i]),
            Data::Mixed(v) => match &v[i] {
                Item::Simple(s) => *s,
                Item::Boxed(_) => Scalar::F64(f64::NAN),
            },
        }
    }

    /// Item `i`, whatever the data.
    pub fn item(&self, i: usize) -> Item {
        match self {
            Data::Mixed(v) => v[i].clone(),
            d => Item::Simple(d.get(i)),
        }
    }

    /// Appends item `i` of `src`, converted to this data's type (as [`Data::push`]; an
    /// enclosed item only to mixed data). What structural functions move items with.
    pub fn push_from(&mut self, src: &Data, i: usize) {
        match (self, src) {
            (Data::Mixed(v), src) => v.push(src.item(i)),
            (d, src) => d.push(src.get(i)),
        }
    }

    /// Appends an item (to mixed data; a simple item to any, converted).
    pub fn push_item(&mut self, it: Item) {
        match (self, it) {
            (Data::Mixed(v), it) => v.push(it),
            (d, Item::Simple(s)) => d.push(s),
            (_, Item::Boxed(_)) => panic!("Data::push_item: an enclosed item into simple data"),
        }
    }

    /// No elements of type `ty`.
    pub fn empty(ty: ElemType) -> Data {
        Data::with_capacity(ty, 0)
    }

    /// No elements of type `ty` yet, room for `n`.
    pub fn with_capacity(ty: ElemType, n: usize) -> Data {
        match ty {
            ElemType::Bool => Data::Bool(Vec::with_capacity(n)),
            ElemType::I32 => Data::I32(Vec::with_capacity(n)),
            ElemType::I64 => Data::I64(Vec::with_capacity(n)),
            ElemType::F32 => Data::F32(Vec::with_capacity(n)),
            ElemType::F64 => Data::F64(Vec::with_capacity(n)),
            ElemType::Char => Data::Char(Vec::with_capacity(n)),
            ElemType::Mixed => Data::Mixed(Vec::with_capacity(n).into()),
        }
    }

    /// Appends `s`, converted to this data's type.
    pub fn push(&mut self, s: Scalar) {
        match (self, s) {
            (Data::Bool(v), s) => v.push(s.as_f64() != 0.0),
            (Data::I32(v), s) => v.push(match s.cast(ElemType::I32) {
                Scalar::I32(x) => x,
                _ => 0,
            }),
            (Data::I64(v), s) => v.push(match s.cast(ElemType::I64) {
                Scalar::I64(x) => x,
                _ => 0,
            }),
            (Data::F32(v), s) => v.push(s.as_f64() as f32),
            (Data::F64(v), s) => v.push(s.as_f64()),
            (Data::Char(v), s) => v.push(match s {
                Scalar::Char(c) => c,
                _ => ' ',
            }),
            (Data::Mixed(v), s) => v.push(Item::Simple(s)),
        }
    }

    /// Little-endian bytes, as a device buffer holds them (a mixed array's are its
    /// simple items' code points and numbers as f64 bits; it never reaches a device:
    /// the GPU path refuses the type).
    pub fn to_bytes(&self) -> Vec<u8> {
        match self {
            Data::Bool(v) => v.iter().flat_map(|x| (*x as u32).to_le_bytes()).collect(),
            Data::I32(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
            Data::I64(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
            Data::F32(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
            Data::F64(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
            Data::Char(v) => v.iter().flat_map(|x| (*x as u32).to_le_bytes()).collect(),
            Data::Mixed(v) => v
                .iter()
                .flat_map(|x| x.simple().map_or(f64::NAN, |s| s.as_f64()).to_le_bytes())
                .collect(),
        }
    }

    /// Reads `n` elements of type `ty` from little-endian bytes.
    pub fn from_bytes(ty: ElemType, bytes: &[u8], n: usize) -> Data {
        let w = ty.size();
        let chunks = bytes.chunks_exact(w).take(n);
        match ty {
            ElemType::Bool => Data::Bool(chunks.map(|c| c != [0u8; 4]).collect()),
            ElemType::I32 => Data::I32(
                chunks
                    .map(|c| i32::from_le_bytes(c.try_into().unwrap()))
                    .collect(),
            ),
            ElemType::I64 => Data::I64(
                chunks
                    .map(|c| i64::from_le_bytes(c.try_into().unwrap()))
                    .collect(),
            ),
            ElemType::F32 => Data::F32(
                chunks
                    .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
                    .collect(),
            ),
            ElemType::F64 => Data::F64(
                chunks
                    .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
                    .collect(),
            ),
            ElemType::Char => Data::Char(
                chunks
                    .map(|c| {
                        char::from_u32(u32::from_le_bytes(c.try_into().unwrap()))
                            .unwrap_or(char::REPLACEMENT_CHARACTER)
                    })
                    .collect(),
            ),
            ElemType::Mixed => Data::Mixed(
                chunks
                    .map(|c| Item::Simple(Scalar::F64(f64::from_le_bytes(c.try_into().unwrap()))))
                    .collect(),
            ),
        }
    }
}

/// An array: a shape and its items in ravel order (simple data, or [`Item`]s for a
/// mixed or nested one).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Array {
    /// The length of each axis (none for a scalar).
    pub shape: Vec<usize>,
    #[serde(rename = "type")]
    /// The element type (the data's).
    pub elem: ElemType,
    /// The elements in ravel (row-major) order.
    pub data: Data,
}

/// The number of elements of `shape`, `None` beyond `usize`: 0 whenever an axis is
/// empty, however large the others (`0 1e10 1e10⍴x` is empty; a product taken left
/// to right overflowed first, and the fuzzer's `(i)↑7` of a long `i` panicked).
pub fn element_count(shape: &[usize]) -> Option<usize> {
    if shape.contains(&0) {
        return Some(0);
    }
    shape.iter().try_fold(1usize, |n, &d| n.checked_mul(d))
}

/// [`element_count`], `usize::MAX` past `usize` (counts that large are refused later
/// as too many elements).
pub fn saturating_count(shape: &[usize]) -> usize {
    element_count(shape).unwrap_or(usize::MAX)
}

impl Array {
    /// Builds an array.
    ///
    /// # Panics
    /// When the data's length is not the product of the shape (in every build: an
    /// inconsistent array must never reach a kernel). [`Array::try_new`] returns the
    /// error instead.
    pub fn new(shape: Vec<usize>, data: Data) -> Array {
        match Array::try_new(shape, data) {
            Ok(a) => a,
            Err(e) => panic!("Array::new: {e}"),
        }
    }

    /// Builds an array, or says why the data does not fit the shape. Mixed data whose
    /// items are all numbers, or all characters, becomes simple data of their type.
    pub fn try_new(shape: Vec<usize>, data: Data) -> Result<Array, String> {
        let data = simplify(data);
        let a = Array {
            shape,
            elem: data.elem_type(),
            data,
        };
        a.check()?;
        Ok(a)
    }

    /// Whether the fields agree (they are public, so an array made or changed field by
    /// field may not): the element count is the product of the shape, and `elem` is the
    /// data's type.
    pub fn check(&self) -> Result<(), String> {
        let count = element_count(&self.shape).ok_or_else(|| {
            format!(
                "the shape {:?} has more elements than memory can hold",
                self.shape
            )
        })?;
        if count != self.data.len() {
            return Err(format!(
                "the shape {:?} has {count} elements but the data has {}",
                self.shape,
                self.data.len()
            ));
        }
        if self.elem != self.data.elem_type() {
            return Err(format!(
                "the array says {} but its data is {}",
                self.elem,
                self.data.elem_type()
            ));
        }
        Ok(())
    }

    /// `⊂a`: a scalar holding `a` (`a` itself when a simple scalar).
    pub fn enclose(a: Array) -> Array {
        Array::new(vec![], Data::Mixed(vec![Item::enclose(a)].into()))
    }

    /// This array with each item replaced by its prototype (`0×x` for numbers,
    /// blanks for characters, the same at every depth of a nested one).
    pub fn prototype_array(&self) -> Array {
        let data = match &self.data {
            Data::Mixed(items) => Data::Mixed(match items.prototype() {
                Some(p) if items.is_empty() => Items::empty_of(&p),
                _ => items.iter().map(Item::prototype).collect(),
            }),
            d => {
                let z = Scalar::I32(0).cast(d.elem_type());
                let mut out = Data::with_capacity(d.elem_type(), d.len());
                (0..d.len()).for_each(|_| out.push(z));
                out
            }
        };
        Array::new(self.shape.clone(), data)
    }

    /// The item that fills this array (overtake, expand, `⊃` of an empty one): its
    /// prototype. `None` for an empty nested array whose prototype was lost.
    pub fn fill_item(&self) -> Option<Item> {
        match &self.data {
            Data::Mixed(items) => items.prototype(),
            d => Some(Item::Simple(Scalar::I32(0).cast(d.elem_type()))),
        }
    }

    /// The empty array of `shape` (which has an empty axis) made of `proto`: typed by
    /// a simple one, nested with `proto`'s prototype kept otherwise.
    pub fn empty_of(shape: Vec<usize>, proto: &Item) -> Array {
        let data = match proto {
            Item::Simple(s) => Data::empty(s.elem_type()),
            boxed => Data::Mixed(Items::empty_of(boxed)),
        };
        Array::new(shape, data)
    }

    /// Whether this is simple (no item is an enclosed array).
    pub fn is_simple(&self) -> bool {
        match &self.data {
            Data::Mixed(v) => v.iter().all(|i| matches!(i, Item::Simple(_))),
            _ => true,
        }
    }

    /// The scalar array of `s`.
    pub fn scalar(s: Scalar) -> Array {
        let mut d = Data::with_capacity(s.elem_type(), 1);
        d.push(s);
        Array::new(vec![], d)
    }

    /// The vector of `data`.
    pub fn vector(data: Data) -> Array {
        Array::new(vec![data.len()], data)
    }

    /// The number of axes.
    pub fn rank(&self) -> usize {
        self.shape.len()
    }

    /// The element count.
    pub fn len(&self) -> usize {
        self.data.len()
    }

    /// Whether there are no elements.
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// The window size `n` of n-wise reduction `n f/x`: one integer, or a DOMAIN
    /// (not an integer) or LENGTH (not one element) ERROR.
    pub fn window_size(&self, span: &arrc_syntax::Span) -> crate::error::Result<i64> {
        use crate::error::err;
        match self.as_singleton() {
            Some(s) if self.rank() <= 1 => s.as_i64().ok_or_else(|| {
                err::domain(
                    "the window size of n-wise reduction must be an integer",
                    span.clone(),
                )
            }),
            _ => Err(err::length(
                "the window size of n-wise reduction must be a single integer",
                span.clone(),
            )),
        }
    }

    /// The windows of n-wise reduction `n f/[axis] x` (this array is `x`, a scalar a
    /// one-item vector) as one more axis after `axis`: window `c`, item `k` is
    /// `x[c+k]` (`x[c+w-1-k]` for negative `n`). LENGTH ERROR for a window longer
    /// than the axis plus one.
    pub fn windows(
        &self,
        n: &Array,
        axis: usize,
        span: &arrc_syntax::Span,
    ) -> crate::error::Result<Array> {
        let n = n.window_size(span)?;
        let x = if self.rank() == 0 {
            Array::new(vec![1], self.data.clone())
        } else {
            self.clone()
        };
        let len = x.shape[axis] as i64;
        let w = n.unsigned_abs() as i64;
        if w > len + 1 {
            return Err(crate::error::err::length(
                format!("a window of {w} is longer than the axis ({len}) plus one"),
                span.clone(),
            ));
        }
        let (count, w) = ((len - w + 1) as usize, w as usize);
        let (outer, _, inner) = x.around(axis);
        let mut shape = x.shape.clone();
        shape[axis] = count;
        shape.insert(axis + 1, w);
        let mut d = Data::with_capacity(x.elem, outer * count * w * inner);
        for o in 0..outer {
            for c in 0..count {
                for k in 0..w {
                    let at = c + if n < 0 { w - 1 - k } else { k };
                    for i in 0..inner {
                        d.push_from(&x.data, (o * len as usize + at) * inner + i);
                    }
                }
            }
        }
        Ok(Array::new(shape, d))
    }

    /// The array seen along `axis`: (cells before it, its length, elements after it);
    /// element `(o, k, i)` is at `(o·len + k)·inner + i`.
    /// The counts saturate: an empty array may have other axes whose product leaves
    /// `usize` (`(1e10 1e10 0)⍴0`).
    pub fn around(&self, axis: usize) -> (usize, usize, usize) {
        let product = |d: &[usize]| d.iter().fold(1usize, |a, &b| a.saturating_mul(b));
        let outer = product(&self.shape[..axis]);
        let inner = product(&self.shape[axis + 1..]);
        (outer, self.shape[axis], inner)
    }

    /// The one element of a scalar or one-element array.
    /// A single 0 or 1 (a scalar or one-item vector), as `f⍣g`'s test must give.
    pub fn as_boolean(&self) -> Option<bool> {
        match self.as_singleton().and_then(|s| s.as_i64()) {
            Some(b @ (0 | 1)) if self.rank() <= 1 => Some(b == 1),
            _ => None,
        }
    }

    /// Its one element, if it has exactly one (a scalar or a one-element array).
    pub fn as_singleton(&self) -> Option<Scalar> {
        (self.len() == 1).then(|| self.data.get(0))
    }

    /// Converts every element to `ty`.
    pub fn cast(&self, ty: ElemType) -> Array {
        if ty == self.elem {
            return self.clone();
        }
        let mut d = Data::with_capacity(ty, self.len());
        for i in 0..self.len() {
            d.push(self.data.get(i).cast(ty));
        }
        Array::new(self.shape.clone(), d)
    }

    /// `{"shape":[…],"type":"…","data":[…]}` on one line.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
}

/// Mixed data made simple where its items allow: all numbers (of their joined type)
/// or all characters. Empty mixed data stays mixed unless its prototype is simple.
fn simplify(data: Data) -> Data {
    let Data::Mixed(items) = &data else {
        return data;
    };
    if let (true, Some(Item::Simple(p))) = (items.is_empty(), items.prototype()) {
        return Data::empty(p.elem_type());
    }
    let mut ty: Option<ElemType> = None;
    for it in items {
        let Item::Simple(s) = it else {
            return data;
        };
        let t = s.elem_type();
        ty = match ty {
            None => Some(t),
            Some(u) if u.mixes(t) => return data,
            Some(u) => Some(u.join(t)),
        };
    }
    let Some(ty) = ty else {
        return data;
    };
    let mut d = Data::with_capacity(ty, items.len());
    for it in items {
        if let Item::Simple(s) = it {
            d.push(*s);
        }
    }
    d
}
