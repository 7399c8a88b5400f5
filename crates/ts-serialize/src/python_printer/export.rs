//! Printing a type and everything it depends on, in the order `torch.jit.save` does: the root
//! first, then each named type the printed code refers to, breadth first in order of first
//! reference, each into the file of its qualifier.

use std::collections::HashSet;

use ts_core::{Type, TypeRef};

use super::annotation::annotation;
use super::{schema_from_graph, PrintError, PythonPrinter};

impl PythonPrinter {
    /// Prints `root` (a module or class type, typically) and, transitively, every class,
    /// function, named tuple, interface and enum its code and attributes refer to. Types
    /// already printed by this printer are not printed again. A function type must carry its
    /// function (`FunctionType::function`) with a graph.
    pub fn add_type_tree(&mut self, root: &TypeRef) -> Result<(), PrintError> {
        self.add_types(std::slice::from_ref(root))
    }

    /// Like [`PythonPrinter::add_type_tree`] with several roots printed first, in order.
    /// `torch.jit.save` prints the classes of the objects it pickled into `data.pkl` (in
    /// pickling order) before the dependencies of their code.
    pub fn add_types(&mut self, first: &[TypeRef]) -> Result<(), PrintError> {
        for t in first {
            self.add_one_type(t)?;
        }
        let mut i = 0;
        while let Some(t) = self.deps.types().get(i).cloned() {
            i += 1;
            self.add_one_type(&t)?;
        }
        Ok(())
    }

    fn add_one_type(&mut self, t: &TypeRef) -> Result<(), PrintError> {
        self.deps.add_named(t);
        let name = annotation(t);
        if !self.printed_types.insert(name.clone()) {
            return Ok(());
        }
        match &**t {
            Type::Class(c) => self.add_class_type(c),
            Type::Tuple(_) => self.add_named_tuple(t),
            Type::Interface(it) => self.add_interface(it),
            Type::Enum(e) => self.add_enum(e),
            Type::Function(f) => {
                let func = f
                    .function
                    .as_ref()
                    .and_then(ts_ir::as_function)
                    .ok_or_else(|| PrintError::new(format!("function {name} has no body")))?;
                let g = func
                    .graph()
                    .ok_or_else(|| PrintError::new(format!("function {name} has no graph")))?;
                let schema = func
                    .try_schema()
                    .unwrap_or_else(|| schema_from_graph(&f.name, &g));
                self.add_function(&f.name, &g, &schema)
            }
            _ => Ok(()),
        }
    }

    /// The qualified names of the types printed by [`PythonPrinter::add_type_tree`].
    pub fn printed_types(&self) -> &HashSet<String> {
        &self.printed_types
    }
}
